// Run history: every run's report, as rows in one SQLite file, so a link can be followed across
// runs and two runs compared long after their report directories are gone. The file is shared by
// every tusk-controller on the host (WAL, a busy timeout), carries its schema version, and is
// upgraded in a transaction by the first build that knows a newer one; a file newer than this build
// is refused, never rewritten.
//
// A RunHistory owns one connection; it is not thread-safe (one thread uses it, as the controller's
// main thread does after a run).
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "controller/history/history_rows.hpp"

namespace tusk {

// The history file could not be opened, upgraded, read or written; the message names the file.
class HistoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The schema this build writes. Raise it with a new entry in run_history.cpp's migrations.
inline constexpr int kHistorySchemaVersion = 2;

// `--history` when none is given: $XDG_DATA_HOME/tusk/history.sqlite, else
// $HOME/.local/share/tusk/history.sqlite, else ./tusk-history.sqlite.
std::string default_history_path();

struct RunFilter {
  std::string profile;    // the profile's name; "" for any
  std::string agent;      // runs this agent took part in (or was missing from); "" for any
  std::size_t limit = 0;  // the newest this many; 0 for all
};

// One stream of one run, for a trend.
struct StreamTrendRow {
  RunRow run;
  StreamRow stream;
};

// One link of one run, for a trend.
struct LinkTrendRow {
  RunRow run;
  LinkRow link;
};

class RunHistory {
 public:
  // Opens `path`, creating it and its parent directories when absent, and brings its schema up to
  // kHistorySchemaVersion. Throws HistoryError naming the file (a newer schema, not a history
  // file, not writable).
  explicit RunHistory(const std::string& path);

  const std::string& path() const { return path_; }
  // The schema version the file carries.
  int schema_version() const;

  // Records one run's report in one transaction: a crash or an error midway leaves the history as it
  // was, and recording a run id again replaces that run. Throws ReportUnreadable naming the field of
  // a malformed report (nothing written), HistoryError for a failing file.
  void record_run(const nlohmann::ordered_json& report, std::string_view run_directory);
  void record_rows(const RunRows& rows);

  // Oldest first (by start time), so a table reads down in time.
  std::vector<RunRow> list_runs(const RunFilter& filter = {}) const;
  std::optional<RunRow> find_run(std::string_view run_id) const;
  // Everything recorded of one run, in the report's order; nullopt when the run is not recorded.
  std::optional<RunRows> load_run(std::string_view run_id) const;

  // Every recorded stream `link` names, oldest run first: its hosts' link ("lab-a->lab-b", spaces
  // ignored), its stream id ("rx:lab-a/1"), its agent and stream id ("lab-b:rx:lab-a/1"), or its
  // flow's 5-tuple text.
  std::vector<StreamTrendRow> stream_trend(std::string_view link, const RunFilter& filter = {}) const;
  // Every recorded fabric link `link` names by its key or its name, oldest run first.
  std::vector<LinkTrendRow> link_trend(std::string_view link, const RunFilter& filter = {}) const;

 private:
  std::string path_;
  // Reading is const for callers; SQLite's connection changes state on every statement.
  mutable SQLite::Database database_;
};

}  // namespace tusk
