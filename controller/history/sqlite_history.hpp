// Run history in one SQLite file (the embedded default): shared by every tusk-controller on the
// host (WAL, a busy timeout), its schema version in PRAGMA user_version, another program's file
// (PRAGMA application_id, or tables of its own) refused untouched.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

#include "controller/history/history_store.hpp"

namespace tusk {

class SqliteHistory : public HistoryStore {
 public:
  // Opens `path`, creating it and its parent directories when absent, and brings its schema up to
  // kHistorySchemaVersion. Throws HistoryError naming the file.
  explicit SqliteHistory(const std::string& path);

  int schema_version() const override;
  void record_rows(const RunRows& rows) override;
  std::vector<RunRow> list_runs(const RunFilter& filter) const override;
  std::optional<RunRow> find_run(std::string_view run_id) const override;
  std::optional<RunRows> load_run(std::string_view run_id) const override;
  std::vector<StreamTrendRow> stream_trend(std::string_view link, const RunFilter& filter) const override;
  std::vector<LinkTrendRow> link_trend(std::string_view link, const RunFilter& filter) const override;
  std::vector<LinkTrendRow> links_since(std::int64_t since_ns) const override;
  std::vector<HostRunRow> hosts_since(std::int64_t since_ns) const override;

 private:
  std::string path_;
  // Reading is const for callers; SQLite's connection changes state on every statement.
  mutable SQLite::Database database_;
};

}  // namespace tusk
