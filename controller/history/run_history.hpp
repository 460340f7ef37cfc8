// Run history: every run's report, as rows, so a link can be followed across runs and two runs
// compared long after their report directories are gone. `--history` names where: an SQLite file
// (the default; shared by every tusk-controller on the host: WAL, a busy timeout) or a PostgreSQL
// database (`postgresql://...`, `postgres://...` or a libpq key=value string), shared by a fleet's
// controllers (issue 62). Either carries its schema version and is upgraded in a transaction by the
// first build that knows a newer one; a history newer than this build is refused, never rewritten.
//
// A RunHistory owns one connection; it is not thread-safe (one thread uses it, as the controller's
// main thread does after a run).
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/history/history_store.hpp"

namespace tusk {

// `--history` when none is given: $XDG_DATA_HOME/tusk/history.sqlite, else
// $HOME/.local/share/tusk/history.sqlite, else ./tusk-history.sqlite.
std::string default_history_path();

class RunHistory {
 public:
  // Opens the history at `location` (a PostgreSQL one where is_postgres_location says so, else an
  // SQLite file, created with its parent directories when absent) and brings its schema up to
  // kHistorySchemaVersion. Throws HistoryError naming it (a newer schema, not a history, not
  // writable, a server that does not answer, a password written in the location).
  explicit RunHistory(const std::string& location);

  // The location as given (a PostgreSQL one never carries a password: it is refused).
  const std::string& path() const { return path_; }
  // The schema version the history carries.
  int schema_version() const { return store_->schema_version(); }

  // Records one run's report in one transaction: a crash or an error midway leaves the history as it
  // was, and recording a run id again replaces that run. Throws ReportUnreadable naming the field of
  // a malformed report (nothing written), HistoryError for a failing file.
  void record_run(const nlohmann::ordered_json& report, std::string_view run_directory);
  void record_rows(const RunRows& rows) { store_->record_rows(rows); }

  // Oldest first (by start time), so a table reads down in time.
  std::vector<RunRow> list_runs(const RunFilter& filter = {}) const { return store_->list_runs(filter); }
  std::optional<RunRow> find_run(std::string_view run_id) const { return store_->find_run(run_id); }
  // Everything recorded of one run, in the report's order; nullopt when the run is not recorded.
  std::optional<RunRows> load_run(std::string_view run_id) const { return store_->load_run(run_id); }

  // Every recorded stream `link` names, oldest run first: its hosts' link ("lab-a->lab-b", spaces
  // ignored), its stream id ("rx:lab-a/1"), its agent and stream id ("lab-b:rx:lab-a/1"), or its
  // flow's 5-tuple text.
  std::vector<StreamTrendRow> stream_trend(std::string_view link, const RunFilter& filter = {}) const {
    return store_->stream_trend(link, filter);
  }
  // Every recorded fabric link `link` names by its key or its name, oldest run first.
  std::vector<LinkTrendRow> link_trend(std::string_view link, const RunFilter& filter = {}) const {
    return store_->link_trend(link, filter);
  }
  // The fabric's record across runs since `since_ns` (0: all), oldest run first.
  std::vector<LinkTrendRow> links_since(std::int64_t since_ns) const { return store_->links_since(since_ns); }
  std::vector<HostRunRow> hosts_since(std::int64_t since_ns) const { return store_->hosts_since(since_ns); }

 private:
  std::string path_;
  std::unique_ptr<HistoryStore> store_;
};

// Whether `--history` names a PostgreSQL database: a postgresql:// or postgres:// URI, or a libpq
// key=value string ("service=tusk", "host=/run/pg dbname=tusk"). Anything else is an SQLite file.
bool is_postgres_location(std::string_view location);

// Whether there is a history at `location` to read: an SQLite file that exists; a PostgreSQL
// location always (connecting says whether it answers).
bool history_exists(const std::string& location);

}  // namespace tusk
