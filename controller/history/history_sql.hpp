// What the SQLite and the PostgreSQL run histories share of their SQL: the columns each reader
// takes, in its order, the order runs are listed in, and the readers themselves, over any result
// that gives a row's cells by index (`Cells`: text, int64, optional_int64, real, optional_real).
#pragma once

#include <string>
#include <vector>

#include "controller/history/history_store.hpp"

namespace tusk::history_sql {

// The column types a store's SQL writes.
struct Dialect {
  const char* id;       // a run's own key
  const char* integer;  // 64 bits
  const char* real;     // a double
};
inline constexpr Dialect kSqlite{"INTEGER PRIMARY KEY", "INTEGER", "REAL"};
inline constexpr Dialect kPostgres{"BIGSERIAL PRIMARY KEY", "BIGINT", "DOUBLE PRECISION"};

// Migration k takes a history from schema version k - 1 to k; each runs inside the store's upgrade
// transaction, so a history is at one version or the next, never between. One list for both
// stores: a new version is one more entry here.
struct Migration {
  int to_version;
  std::string sql;
};
std::vector<Migration> migrations(const Dialect& dialect);

inline constexpr const char* kRunColumns =
    "r.id, r.run_id, r.profile_name, r.profile_file, r.started_ns, r.finished_ns, r.exit_code, r.conclusion, "
    "r.run_directory, r.tusk_version, r.retest_of";
inline constexpr int kRunColumnCount = 11;
inline constexpr const char* kStreamColumns =
    "s.test, s.engine, s.agent, s.stream_id, s.peer, s.flow, s.link, s.passed, s.throughput_bps, s.loss_ratio, "
    "s.lost_frames, s.bit_errors, s.bits_compared, s.ber_upper_bound, s.retransmits, s.latency_p99_ns, "
    "s.completion_errors";
inline constexpr const char* kLinkColumns =
    "l.test, l.link_key, l.name, l.role, l.confidence, l.votes, l.flows, l.failing_flows, l.kind, l.rate";
inline constexpr const char* kRunOrder = "COALESCE(r.started_ns, r.recorded_ns), r.id";

// The fabric record's two queries, from kRunColumns and kLinkColumns: `placeholder` ("?" or "$1")
// is the one parameter, the earliest start (ns) kept.
std::string links_since_sql(const char* placeholder);
std::string hosts_since_sql(const char* placeholder);

// kRunColumns from column 0 (its id, column 0, is the caller's).
template <class Cells>
RunRow read_run(const Cells& cells) {
  RunRow run;
  run.run_id = cells.text(1);
  run.profile_name = cells.text(2);
  run.profile_file = cells.text(3);
  run.started_ns = cells.optional_int64(4);
  run.finished_ns = cells.optional_int64(5);
  run.exit_code = static_cast<int>(cells.int64(6));
  run.conclusion = cells.text(7);
  run.run_directory = cells.text(8);
  run.tusk_version = cells.text(9);
  run.retest_of = cells.text(10);
  return run;
}

// kStreamColumns from column `first`.
template <class Cells>
StreamRow read_stream(const Cells& cells, int first) {
  StreamRow row;
  int at = first;
  for (std::string* text : {&row.test, &row.engine, &row.agent, &row.stream_id, &row.peer, &row.flow, &row.link}) {
    *text = cells.text(at++);
  }
  row.passed = cells.int64(at++) != 0;
  for (auto* value : {&row.throughput_bps, &row.loss_ratio, &row.lost_frames, &row.bit_errors, &row.bits_compared,
                      &row.ber_upper_bound, &row.retransmits, &row.latency_p99_ns, &row.completion_errors}) {
    *value = cells.optional_real(at++);
  }
  return row;
}

// kLinkColumns from column `first`.
template <class Cells>
LinkRow read_link(const Cells& cells, int first) {
  LinkRow row;
  row.test = cells.text(first);
  row.key = cells.text(first + 1);
  row.name = cells.text(first + 2);
  row.role = cells.text(first + 3);
  row.confidence = cells.text(first + 4);
  row.votes = cells.real(first + 5);
  row.flows = static_cast<int>(cells.int64(first + 6));
  row.failing_flows = static_cast<int>(cells.int64(first + 7));
  row.kind = cells.text(first + 8);
  row.rate = cells.optional_real(first + 9);
  return row;
}

// A row of hosts_since_sql.
template <class Cells>
HostRunRow read_host_run(const Cells& cells) {
  return {read_run(cells), cells.text(kRunColumnCount), static_cast<int>(cells.int64(kRunColumnCount + 1)),
          static_cast<int>(cells.int64(kRunColumnCount + 2))};
}

}  // namespace tusk::history_sql
