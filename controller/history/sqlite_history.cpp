#include "controller/history/sqlite_history.hpp"

#include <SQLiteCpp/VariadicBind.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "controller/history/history_sql.hpp"

namespace tusk {
namespace fs = std::filesystem;
using namespace history_sql;

namespace {

// PRAGMA application_id of a history file ("Tusk" in ASCII): a SQLite file some other program made
// is refused instead of having tables added to it.
constexpr int kApplicationId = 0x5475736b;
constexpr int kBusyTimeoutMs = 10'000;  // another controller recording its run holds the write lock briefly

// Runs `body`, turning SQLite's exceptions into HistoryError naming the file and what was being done.
template <class Body>
auto guarded(const std::string& path, std::string_view doing, Body&& body) {
  try {
    return body();
  } catch (const SQLite::Exception& e) {
    throw HistoryError(fmt::format("{}: {}: {}", path, doing, e.what()));
  }
}

SQLite::Database open_database(const std::string& path) {
  std::error_code error;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, error);
    if (error) throw HistoryError(fmt::format("{}: cannot create its directory: {}", path, error.message()));
  }
  return guarded(path, "cannot open it",
                 [&] { return SQLite::Database(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, kBusyTimeoutMs); });
}

int pragma_int(SQLite::Database& database, const char* name) {
  return database.execAndGet(fmt::format("PRAGMA {}", name)).getInt();
}

void refuse_unknown(const std::string& path, int version, int application_id) {
  if (application_id != 0 && application_id != kApplicationId) {
    throw HistoryError(fmt::format(
        "{}: not a tusk run history (an SQLite file of another program, application id {:#x})", path, application_id));
  }
  if (version > kHistorySchemaVersion) {
    throw HistoryError(fmt::format(
        "{}: history schema version {} is newer than this tusk-controller knows ({}); use a newer tusk-controller "
        "or another --history file",
        path, version, kHistorySchemaVersion));
  }
}

// Refuses a file this build must not touch: a newer schema, another program's database (its
// application id, or tables in a file that has no version yet).
void check_is_history(SQLite::Database& database, const std::string& path) {
  const int version = pragma_int(database, "user_version");
  const int application_id = pragma_int(database, "application_id");
  refuse_unknown(path, version, application_id);
  if (version == 0 && application_id == 0 && database.execAndGet("SELECT count(*) FROM sqlite_schema").getInt() > 0) {
    throw HistoryError(fmt::format("{}: not a tusk run history (it has tables of its own)", path));
  }
}

// Brings the file to kHistorySchemaVersion. The file is checked again under the write lock:
// another controller may have upgraded it since it was opened.
void upgrade_schema(SQLite::Database& database, const std::string& path) {
  if (pragma_int(database, "user_version") == kHistorySchemaVersion) return;
  SQLite::Transaction transaction(database, SQLite::TransactionBehavior::IMMEDIATE);
  check_is_history(database, path);
  const int version = pragma_int(database, "user_version");
  for (const Migration& migration : migrations(kSqlite)) {
    if (migration.to_version > version) database.exec(migration.sql);
  }
  database.exec(fmt::format("PRAGMA user_version = {}", kHistorySchemaVersion));
  database.exec(fmt::format("PRAGMA application_id = {}", kApplicationId));
  transaction.commit();
}

void bind_optional(SQLite::Statement& statement, int index, const std::optional<double>& value) {
  if (value) {
    statement.bind(index, *value);
  } else {
    statement.bind(index);
  }
}

void bind_optional(SQLite::Statement& statement, int index, const std::optional<std::int64_t>& value) {
  if (value) {
    statement.bind(index, static_cast<int64_t>(*value));
  } else {
    statement.bind(index);
  }
}

// A statement's current row, by column, for history_sql's readers.
struct StatementCells {
  const SQLite::Statement& statement;
  std::string text(int i) const { return statement.getColumn(i).getString(); }
  std::int64_t int64(int i) const { return statement.getColumn(i).getInt64(); }
  std::optional<std::int64_t> optional_int64(int i) const {
    if (statement.isColumnNull(i)) return std::nullopt;
    return int64(i);
  }
  double real(int i) const { return statement.getColumn(i).getDouble(); }
  std::optional<double> optional_real(int i) const {
    if (statement.isColumnNull(i)) return std::nullopt;
    return real(i);
  }
};

// Which runs a filter keeps; binds :profile and :agent.
constexpr const char* kSqliteRunFilter =
    "(:profile = '' OR r.profile_name = :profile) AND (:agent = '' OR EXISTS (SELECT 1 FROM run_agents a WHERE "
    "a.run = r.id AND a.agent = :agent))";

std::vector<std::string> agents_of(SQLite::Database& database, std::int64_t run) {
  SQLite::Statement statement(database, "SELECT agent FROM run_agents WHERE run = ? ORDER BY position");
  statement.bind(1, static_cast<int64_t>(run));
  std::vector<std::string> agents;
  while (statement.executeStep()) agents.push_back(statement.getColumn(0).getString());
  return agents;
}

void bind_filter(SQLite::Statement& statement, const RunFilter& filter) {
  statement.bind(":profile", filter.profile);
  statement.bind(":agent", filter.agent);
}

}  // namespace

SqliteHistory::SqliteHistory(const std::string& path) : path_(path), database_(open_database(path)) {
  // Checked before anything is changed: another program's file is left exactly as it was.
  guarded(path_, "cannot read it as a run history", [&] { check_is_history(database_, path_); });
  guarded(path_, "cannot set it up", [&] {
    // WAL lets `history` read while another controller records; a file system without it (some
    // network ones) keeps the rollback journal, which is slower but as safe.
    database_.execAndGet("PRAGMA journal_mode = WAL");
    database_.exec("PRAGMA foreign_keys = ON");
  });
  guarded(path_, "cannot upgrade its schema", [&] { upgrade_schema(database_, path_); });
}

int SqliteHistory::schema_version() const {
  return guarded(path_, "cannot read its schema version",
                 [&] { return database_.execAndGet("PRAGMA user_version").getInt(); });
}

void SqliteHistory::record_rows(const RunRows& rows) {
  const RunRow& run = rows.run;
  guarded(path_, fmt::format("cannot record run {}", run.run_id), [&] {
    SQLite::Transaction transaction(database_, SQLite::TransactionBehavior::IMMEDIATE);
    // Recording a run again replaces it. The children go explicitly too: foreign keys may be off
    // in a connection that did not ask for them.
    for (const char* table : {"run_agents", "streams", "links"}) {
      SQLite::Statement remove(
          database_, fmt::format("DELETE FROM {} WHERE run IN (SELECT id FROM runs WHERE run_id = ?)", table));
      remove.bind(1, run.run_id);
      remove.exec();
    }
    SQLite::Statement remove_run(database_, "DELETE FROM runs WHERE run_id = ?");
    remove_run.bind(1, run.run_id);
    remove_run.exec();

    SQLite::Statement insert_run(database_,
                                 "INSERT INTO runs (run_id, profile_name, profile_file, started_ns, finished_ns, "
                                 "exit_code, conclusion, run_directory, tusk_version, recorded_ns, retest_of) "
                                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert_run.bind(1, run.run_id);
    insert_run.bind(2, run.profile_name);
    insert_run.bind(3, run.profile_file);
    bind_optional(insert_run, 4, run.started_ns);
    bind_optional(insert_run, 5, run.finished_ns);
    insert_run.bind(6, run.exit_code);
    insert_run.bind(7, run.conclusion);
    insert_run.bind(8, run.run_directory);
    insert_run.bind(9, run.tusk_version);
    const auto now =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch());
    insert_run.bind(10, static_cast<int64_t>(now.count()));
    insert_run.bind(11, run.retest_of);
    insert_run.exec();
    const auto id = static_cast<int64_t>(database_.getLastInsertRowid());

    SQLite::Statement insert_agent(database_, "INSERT INTO run_agents (run, position, agent) VALUES (?, ?, ?)");
    for (std::size_t i = 0; i < run.agents.size(); ++i) {
      SQLite::bind(insert_agent, id, static_cast<int64_t>(i), run.agents[i]);
      insert_agent.exec();
      insert_agent.reset();
    }

    SQLite::Statement insert_stream(
        database_,
        "INSERT INTO streams (run, position, test, engine, agent, stream_id, peer, flow, link, passed, throughput_bps, "
        "loss_ratio, lost_frames, bit_errors, bits_compared, ber_upper_bound, retransmits, latency_p99_ns, "
        "completion_errors) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (std::size_t i = 0; i < rows.streams.size(); ++i) {
      const StreamRow& stream = rows.streams[i];
      int at = 1;
      insert_stream.bind(at++, id);
      insert_stream.bind(at++, static_cast<int64_t>(i));
      for (const std::string* text :
           {&stream.test, &stream.engine, &stream.agent, &stream.stream_id, &stream.peer, &stream.flow, &stream.link}) {
        insert_stream.bind(at++, *text);
      }
      insert_stream.bind(at++, stream.passed ? 1 : 0);
      for (const auto* value :
           {&stream.throughput_bps, &stream.loss_ratio, &stream.lost_frames, &stream.bit_errors, &stream.bits_compared,
            &stream.ber_upper_bound, &stream.retransmits, &stream.latency_p99_ns, &stream.completion_errors}) {
        bind_optional(insert_stream, at++, *value);
      }
      insert_stream.exec();
      insert_stream.reset();
    }

    SQLite::Statement insert_link(database_,
                                  "INSERT INTO links (run, position, test, link_key, name, role, confidence, votes, "
                                  "flows, failing_flows, kind, rate) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (std::size_t i = 0; i < rows.links.size(); ++i) {
      const LinkRow& link = rows.links[i];
      SQLite::bind(insert_link, id, static_cast<int64_t>(i), link.test, link.key, link.name, link.role, link.confidence,
                   link.votes, link.flows, link.failing_flows, link.kind);
      bind_optional(insert_link, 12, link.rate);
      insert_link.exec();
      insert_link.reset();
    }
    transaction.commit();
  });
}

std::vector<RunRow> SqliteHistory::list_runs(const RunFilter& filter) const {
  auto& database = database_;
  return guarded(path_, "cannot list runs", [&] {
    SQLite::Statement statement(
        database, fmt::format("SELECT {} FROM runs r WHERE {} ORDER BY {}", kRunColumns, kSqliteRunFilter, kRunOrder));
    bind_filter(statement, filter);
    std::vector<std::pair<std::int64_t, RunRow>> found;
    while (statement.executeStep())
      found.emplace_back(statement.getColumn(0).getInt64(), read_run(StatementCells{statement}));
    if (filter.limit && found.size() > filter.limit) found.erase(found.begin(), found.end() - filter.limit);
    std::vector<RunRow> runs;
    for (auto& [id, run] : found) {
      run.agents = agents_of(database, id);
      runs.push_back(std::move(run));
    }
    return runs;
  });
}

std::optional<RunRow> SqliteHistory::find_run(std::string_view run_id) const {
  auto& database = database_;
  return guarded(path_, fmt::format("cannot read run {}", run_id), [&]() -> std::optional<RunRow> {
    SQLite::Statement statement(database, fmt::format("SELECT {} FROM runs r WHERE r.run_id = ?", kRunColumns));
    statement.bind(1, std::string(run_id));
    if (!statement.executeStep()) return std::nullopt;
    RunRow run = read_run(StatementCells{statement});
    run.agents = agents_of(database, statement.getColumn(0).getInt64());
    return run;
  });
}

std::optional<RunRows> SqliteHistory::load_run(std::string_view run_id) const {
  auto run = find_run(run_id);
  if (!run) return std::nullopt;
  auto& database = database_;
  return guarded(path_, fmt::format("cannot read run {}", run_id), [&] {
    RunRows rows;
    rows.run = std::move(*run);
    SQLite::Statement streams(database, fmt::format("SELECT {} FROM streams s JOIN runs r ON r.id = s.run WHERE "
                                                    "r.run_id = ? ORDER BY s.position",
                                                    kStreamColumns));
    streams.bind(1, std::string(run_id));
    while (streams.executeStep()) rows.streams.push_back(read_stream(StatementCells{streams}, 0));
    SQLite::Statement links(database, fmt::format("SELECT {} FROM links l JOIN runs r ON r.id = l.run WHERE "
                                                  "r.run_id = ? ORDER BY l.position",
                                                  kLinkColumns));
    links.bind(1, std::string(run_id));
    while (links.executeStep()) rows.links.push_back(read_link(StatementCells{links}, 0));
    return rows;
  });
}

std::vector<StreamTrendRow> SqliteHistory::stream_trend(std::string_view link, const RunFilter& filter) const {
  auto& database = database_;
  return guarded(path_, fmt::format("cannot read the trend of {}", link), [&] {
    SQLite::Statement statement(
        database,
        fmt::format("SELECT {}, {} FROM streams s JOIN runs r ON r.id = s.run WHERE {} AND (s.link = :link OR "
                    "(s.link <> '' AND replace(s.link, ' ', '') = replace(:link, ' ', '')) OR s.stream_id = :link OR "
                    "s.agent || ':' || s.stream_id = :link OR (s.flow <> '' AND s.flow = :link)) ORDER BY {}, "
                    "s.position",
                    kRunColumns, kStreamColumns, kSqliteRunFilter, kRunOrder));
    bind_filter(statement, filter);
    statement.bind(":link", std::string(link));
    std::vector<StreamTrendRow> rows;
    std::vector<std::int64_t> ids;
    while (statement.executeStep()) {
      rows.push_back({read_run(StatementCells{statement}), read_stream(StatementCells{statement}, kRunColumnCount)});
      ids.push_back(statement.getColumn(0).getInt64());
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i].run.agents = i > 0 && ids[i] == ids[i - 1] ? rows[i - 1].run.agents : agents_of(database, ids[i]);
    }
    keep_newest_runs(rows, filter.limit);
    return rows;
  });
}

std::vector<LinkTrendRow> SqliteHistory::link_trend(std::string_view link, const RunFilter& filter) const {
  auto& database = database_;
  return guarded(path_, fmt::format("cannot read the trend of {}", link), [&] {
    SQLite::Statement statement(
        database, fmt::format("SELECT {}, {} FROM links l JOIN runs r ON r.id = l.run WHERE {} AND (l.link_key = :link "
                              "OR l.name = :link OR replace(l.link_key, ' ', '') = replace(:link, ' ', '')) ORDER BY "
                              "{}, l.position",
                              kRunColumns, kLinkColumns, kSqliteRunFilter, kRunOrder));
    bind_filter(statement, filter);
    statement.bind(":link", std::string(link));
    std::vector<LinkTrendRow> rows;
    while (statement.executeStep())
      rows.push_back({read_run(StatementCells{statement}), read_link(StatementCells{statement}, kRunColumnCount)});
    keep_newest_runs(rows, filter.limit);
    return rows;
  });
}

std::vector<LinkTrendRow> SqliteHistory::links_since(std::int64_t since_ns) const {
  auto& database = database_;
  return guarded(path_, "cannot read the fabric's links", [&] {
    SQLite::Statement statement(database, links_since_sql("?"));
    statement.bind(1, static_cast<int64_t>(since_ns));
    std::vector<LinkTrendRow> rows;
    while (statement.executeStep()) {
      rows.push_back({read_run(StatementCells{statement}), read_link(StatementCells{statement}, kRunColumnCount)});
    }
    return rows;
  });
}

std::vector<HostRunRow> SqliteHistory::hosts_since(std::int64_t since_ns) const {
  auto& database = database_;
  return guarded(path_, "cannot read the fabric's hosts", [&] {
    SQLite::Statement statement(database, hosts_since_sql("?"));
    statement.bind(1, static_cast<int64_t>(since_ns));
    std::vector<HostRunRow> rows;
    while (statement.executeStep()) rows.push_back(read_host_run(StatementCells{statement}));
    return rows;
  });
}

}  // namespace tusk
