// Run history in a PostgreSQL database that a fleet's controllers share (issue 62): the same rows
// as the SQLite file, in the schema `tusk` of the database the location names. Its schema version
// is in tusk.history_schema; controllers upgrading or recording at once are serialised by advisory
// locks (one for the schema, one per run id), each run one transaction.
#pragma once

#include <string>

#include "controller/history/history_store.hpp"
#include "controller/history/pg_connection.hpp"

namespace tusk {

class PostgresHistory : public HistoryStore {
 public:
  // Connects to `location` and brings the schema up to kHistorySchemaVersion. Throws HistoryError
  // naming the location (a password in it, no server, a newer schema, tables not Tusk's).
  explicit PostgresHistory(const std::string& location);

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
  std::vector<std::string> agents_of(std::int64_t run) const;

  PgConnection connection_;
};

}  // namespace tusk
