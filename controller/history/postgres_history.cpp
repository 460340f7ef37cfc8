#include "controller/history/postgres_history.hpp"

#include <fmt/format.h>

#include <chrono>

#include "controller/history/history_sql.hpp"

namespace tusk {
using namespace history_sql;

namespace {

// pg_advisory_xact_lock's key for the schema ("Tusk" in ASCII, as the SQLite file's application id).
constexpr const char* kSchemaLock = "1416983403";

// A result's row, by column, for history_sql's readers.
struct ResultCells {
  const PgResult& result;
  int row;
  std::string text(int i) const { return result.text(row, i); }
  std::int64_t int64(int i) const { return result.int64(row, i); }
  std::optional<std::int64_t> optional_int64(int i) const { return result.optional_int64(row, i); }
  double real(int i) const { return result.real(row, i); }
  std::optional<double> optional_real(int i) const { return result.optional_real(row, i); }
};

// Which runs a filter keeps: $1 the profile, $2 the agent ("" for any).
constexpr const char* kPostgresRunFilter =
    "($1 = '' OR r.profile_name = $1) AND ($2 = '' OR EXISTS (SELECT 1 FROM run_agents a WHERE a.run = r.id AND "
    "a.agent = $2))";

// The version the schema carries; 0 before any; -1 when `tusk` holds tables but no version (not ours).
int stored_version(const PgConnection& connection) {
  const auto tables = connection.exec("cannot read its schema",
                                      "SELECT count(*) FILTER (WHERE table_name = 'history_schema'), count(*) FROM "
                                      "information_schema.tables WHERE table_schema = 'tusk'");
  if (tables.int64(0, 0) == 0) return tables.int64(0, 1) == 0 ? 0 : -1;
  const auto version = connection.exec("cannot read its schema version", "SELECT max(version) FROM history_schema");
  return version.is_null(0, 0) ? 0 : static_cast<int>(version.int64(0, 0));
}

void upgrade_schema(const PgConnection& connection) {
  PgTransaction transaction(connection, "cannot upgrade its schema");
  // One controller at a time: the others wait here, then find the schema done.
  connection.exec("cannot lock its schema", fmt::format("SELECT pg_advisory_xact_lock({})", kSchemaLock));
  connection.exec("cannot create the schema tusk", "CREATE SCHEMA IF NOT EXISTS tusk");
  const int version = stored_version(connection);
  if (version < 0) {
    throw HistoryError(
        fmt::format("{}: not a tusk run history (its schema tusk has tables of its own)", connection.location()));
  }
  if (version > kHistorySchemaVersion) {
    throw HistoryError(fmt::format(
        "{}: history schema version {} is newer than this tusk-controller knows ({}); use a newer tusk-controller",
        connection.location(), version, kHistorySchemaVersion));
  }
  if (version == kHistorySchemaVersion) return;  // rolled back: nothing was changed
  if (version == 0)
    connection.exec("cannot create its schema", "CREATE TABLE history_schema (version INTEGER NOT NULL)");
  for (const Migration& migration : migrations(kPostgres)) {
    if (migration.to_version > version) {
      connection.exec_script(fmt::format("cannot upgrade its schema to version {}", migration.to_version),
                             migration.sql);
    }
  }
  connection.exec("cannot upgrade its schema", "DELETE FROM history_schema");
  connection.exec("cannot upgrade its schema", "INSERT INTO history_schema (version) VALUES ($1)",
                  {std::to_string(kHistorySchemaVersion)});
  transaction.commit();
}

}  // namespace

PostgresHistory::PostgresHistory(const std::string& location) : connection_(location) {
  // Everything Tusk keeps is in its own schema, beside whatever else the database holds.
  connection_.exec("cannot set it up", "SET search_path TO tusk");
  upgrade_schema(connection_);
}

int PostgresHistory::schema_version() const {
  return stored_version(connection_);
}

void PostgresHistory::record_rows(const RunRows& rows) {
  const RunRow& run = rows.run;
  const std::string doing = fmt::format("cannot record run {}", run.run_id);
  PgTransaction transaction(connection_, doing);
  // Two controllers recording the same run id wait for each other instead of colliding.
  connection_.exec(doing, "SELECT pg_advisory_xact_lock(hashtext($1))", {run.run_id});
  connection_.exec(doing, "DELETE FROM runs WHERE run_id = $1", {run.run_id});  // its rows cascade
  const auto now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch());
  const auto inserted = connection_.exec(
      doing,
      "INSERT INTO runs (run_id, profile_name, profile_file, started_ns, finished_ns, exit_code, conclusion, "
      "run_directory, tusk_version, recorded_ns, retest_of) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
      "RETURNING id",
      {run.run_id, run.profile_name, run.profile_file, pg_text(run.started_ns), pg_text(run.finished_ns),
       std::to_string(run.exit_code), run.conclusion, run.run_directory, run.tusk_version, std::to_string(now.count()),
       run.retest_of});
  const std::string id = inserted.text(0, 0);
  for (std::size_t i = 0; i < run.agents.size(); ++i) {
    connection_.exec(doing, "INSERT INTO run_agents (run, position, agent) VALUES ($1, $2, $3)",
                     {id, std::to_string(i), run.agents[i]});
  }
  for (std::size_t i = 0; i < rows.streams.size(); ++i) {
    const StreamRow& stream = rows.streams[i];
    PgParams params{id, std::to_string(i)};
    for (const std::string* text :
         {&stream.test, &stream.engine, &stream.agent, &stream.stream_id, &stream.peer, &stream.flow, &stream.link}) {
      params.emplace_back(*text);
    }
    params.push_back(stream.passed ? "1" : "0");
    for (const auto* value :
         {&stream.throughput_bps, &stream.loss_ratio, &stream.lost_frames, &stream.bit_errors, &stream.bits_compared,
          &stream.ber_upper_bound, &stream.retransmits, &stream.latency_p99_ns, &stream.completion_errors}) {
      params.push_back(pg_text(*value));
    }
    connection_.exec(doing,
                     "INSERT INTO streams (run, position, test, engine, agent, stream_id, peer, flow, link, passed, "
                     "throughput_bps, loss_ratio, lost_frames, bit_errors, bits_compared, ber_upper_bound, "
                     "retransmits, latency_p99_ns, completion_errors) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
                     "$10, $11, $12, $13, $14, $15, $16, $17, $18, $19)",
                     params);
  }
  for (std::size_t i = 0; i < rows.links.size(); ++i) {
    const LinkRow& link = rows.links[i];
    connection_.exec(doing,
                     "INSERT INTO links (run, position, test, link_key, name, role, confidence, votes, flows, "
                     "failing_flows, kind, rate) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
                     {id, std::to_string(i), link.test, link.key, link.name, link.role, link.confidence,
                      pg_text(std::optional<double>(link.votes)), std::to_string(link.flows),
                      std::to_string(link.failing_flows), link.kind, pg_text(link.rate)});
  }
  transaction.commit();
}

std::vector<std::string> PostgresHistory::agents_of(std::int64_t run) const {
  const auto result =
      connection_.exec("cannot read a run's agents", "SELECT agent FROM run_agents WHERE run = $1 ORDER BY position",
                       {std::to_string(run)});
  std::vector<std::string> agents;
  for (int row = 0; row < result.rows(); ++row) agents.push_back(result.text(row, 0));
  return agents;
}

std::vector<RunRow> PostgresHistory::list_runs(const RunFilter& filter) const {
  const auto result = connection_.exec(
      "cannot list runs",
      fmt::format("SELECT {} FROM runs r WHERE {} ORDER BY {}", kRunColumns, kPostgresRunFilter, kRunOrder),
      {filter.profile, filter.agent});
  const int first = filter.limit && static_cast<std::size_t>(result.rows()) > filter.limit
                        ? result.rows() - static_cast<int>(filter.limit)
                        : 0;
  std::vector<RunRow> runs;
  for (int row = first; row < result.rows(); ++row) {
    RunRow run = read_run(ResultCells{result, row});
    run.agents = agents_of(result.int64(row, 0));
    runs.push_back(std::move(run));
  }
  return runs;
}

std::optional<RunRow> PostgresHistory::find_run(std::string_view run_id) const {
  const auto result =
      connection_.exec(fmt::format("cannot read run {}", run_id),
                       fmt::format("SELECT {} FROM runs r WHERE r.run_id = $1", kRunColumns), {std::string(run_id)});
  if (result.rows() == 0) return std::nullopt;
  RunRow run = read_run(ResultCells{result, 0});
  run.agents = agents_of(result.int64(0, 0));
  return run;
}

std::optional<RunRows> PostgresHistory::load_run(std::string_view run_id) const {
  auto run = find_run(run_id);
  if (!run) return std::nullopt;
  const std::string doing = fmt::format("cannot read run {}", run_id);
  RunRows rows;
  rows.run = std::move(*run);
  const auto streams = connection_.exec(
      doing,
      fmt::format("SELECT {} FROM streams s JOIN runs r ON r.id = s.run WHERE r.run_id = $1 ORDER BY s.position",
                  kStreamColumns),
      {std::string(run_id)});
  for (int row = 0; row < streams.rows(); ++row) rows.streams.push_back(read_stream(ResultCells{streams, row}, 0));
  const auto links = connection_.exec(
      doing,
      fmt::format("SELECT {} FROM links l JOIN runs r ON r.id = l.run WHERE r.run_id = $1 ORDER BY l.position",
                  kLinkColumns),
      {std::string(run_id)});
  for (int row = 0; row < links.rows(); ++row) rows.links.push_back(read_link(ResultCells{links, row}, 0));
  return rows;
}

std::vector<StreamTrendRow> PostgresHistory::stream_trend(std::string_view link, const RunFilter& filter) const {
  const auto result = connection_.exec(
      fmt::format("cannot read the trend of {}", link),
      fmt::format("SELECT {}, {} FROM streams s JOIN runs r ON r.id = s.run WHERE {} AND (s.link = $3 OR (s.link <> '' "
                  "AND replace(s.link, ' ', '') = replace($3, ' ', '')) OR s.stream_id = $3 OR s.agent || ':' || "
                  "s.stream_id = $3 OR (s.flow <> '' AND s.flow = $3)) ORDER BY {}, s.position",
                  kRunColumns, kStreamColumns, kPostgresRunFilter, kRunOrder),
      {filter.profile, filter.agent, std::string(link)});
  std::vector<StreamTrendRow> rows;
  for (int row = 0; row < result.rows(); ++row) {
    rows.push_back({read_run(ResultCells{result, row}), read_stream(ResultCells{result, row}, kRunColumnCount)});
    const bool same_run = row > 0 && result.int64(row, 0) == result.int64(row - 1, 0);
    rows.back().run.agents = same_run ? rows[rows.size() - 2].run.agents : agents_of(result.int64(row, 0));
  }
  keep_newest_runs(rows, filter.limit);
  return rows;
}

std::vector<LinkTrendRow> PostgresHistory::link_trend(std::string_view link, const RunFilter& filter) const {
  const auto result = connection_.exec(
      fmt::format("cannot read the trend of {}", link),
      fmt::format("SELECT {}, {} FROM links l JOIN runs r ON r.id = l.run WHERE {} AND (l.link_key = $3 OR l.name = $3 "
                  "OR replace(l.link_key, ' ', '') = replace($3, ' ', '')) ORDER BY {}, l.position",
                  kRunColumns, kLinkColumns, kPostgresRunFilter, kRunOrder),
      {filter.profile, filter.agent, std::string(link)});
  std::vector<LinkTrendRow> rows;
  for (int row = 0; row < result.rows(); ++row) {
    rows.push_back({read_run(ResultCells{result, row}), read_link(ResultCells{result, row}, kRunColumnCount)});
  }
  keep_newest_runs(rows, filter.limit);
  return rows;
}

std::vector<LinkTrendRow> PostgresHistory::links_since(std::int64_t since_ns) const {
  const auto result =
      connection_.exec("cannot read the fabric's links", links_since_sql("$1"), {std::to_string(since_ns)});
  std::vector<LinkTrendRow> rows;
  for (int row = 0; row < result.rows(); ++row) {
    rows.push_back({read_run(ResultCells{result, row}), read_link(ResultCells{result, row}, kRunColumnCount)});
  }
  return rows;
}

std::vector<HostRunRow> PostgresHistory::hosts_since(std::int64_t since_ns) const {
  const auto result =
      connection_.exec("cannot read the fabric's hosts", hosts_since_sql("$1"), {std::to_string(since_ns)});
  std::vector<HostRunRow> rows;
  for (int row = 0; row < result.rows(); ++row) rows.push_back(read_host_run(ResultCells{result, row}));
  return rows;
}

}  // namespace tusk
