#include "controller/history/history_sql.hpp"

#include <fmt/format.h>

namespace tusk::history_sql {

std::vector<Migration> migrations(const Dialect& dialect) {
  constexpr const char* kTables = R"sql(
CREATE TABLE runs (
  id {id},
  run_id TEXT NOT NULL UNIQUE CHECK (run_id <> ''),
  profile_name TEXT NOT NULL,
  profile_file TEXT NOT NULL,
  started_ns {int},
  finished_ns {int},
  exit_code {int} NOT NULL,
  conclusion TEXT NOT NULL,
  run_directory TEXT NOT NULL,
  tusk_version TEXT NOT NULL,
  recorded_ns {int} NOT NULL
);
CREATE INDEX runs_by_profile ON runs (profile_name);
CREATE TABLE run_agents (
  run {int} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  position {int} NOT NULL,
  agent TEXT NOT NULL,
  PRIMARY KEY (run, position)
);
CREATE INDEX run_agents_by_agent ON run_agents (agent);
CREATE TABLE streams (
  run {int} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  position {int} NOT NULL,
  test TEXT NOT NULL CHECK (test <> ''),
  engine TEXT NOT NULL,
  agent TEXT NOT NULL CHECK (agent <> ''),
  stream_id TEXT NOT NULL CHECK (stream_id <> ''),
  peer TEXT NOT NULL,
  flow TEXT NOT NULL,
  link TEXT NOT NULL,
  passed {int} NOT NULL CHECK (passed IN (0, 1)),
  throughput_bps {real},
  loss_ratio {real},
  lost_frames {real},
  bit_errors {real},
  bits_compared {real},
  ber_upper_bound {real},
  retransmits {real},
  latency_p99_ns {real},
  completion_errors {real},
  PRIMARY KEY (run, position)
);
CREATE INDEX streams_by_link ON streams (link);
CREATE INDEX streams_by_stream_id ON streams (stream_id);
CREATE TABLE links (
  run {int} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  position {int} NOT NULL,
  test TEXT NOT NULL,
  link_key TEXT NOT NULL CHECK (link_key <> ''),
  name TEXT NOT NULL,
  role TEXT NOT NULL,
  confidence TEXT NOT NULL,
  votes {real} NOT NULL,
  flows {int} NOT NULL,
  failing_flows {int} NOT NULL,
  PRIMARY KEY (run, position)
);
CREATE INDEX links_by_key ON links (link_key);
)sql";
  return {
      {1, fmt::format(fmt::runtime(kTables), fmt::arg("id", dialect.id), fmt::arg("int", dialect.integer),
                      fmt::arg("real", dialect.real))},
      // A re-test (run --only-failing) names the run whose failures it tested again.
      {2, R"sql(
ALTER TABLE runs ADD COLUMN retest_of TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_by_retest_of ON runs (retest_of);
)sql"},
      // A suspect's fault and its rate, for the fabric's record across runs.
      {3, fmt::format(R"sql(
ALTER TABLE links ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE links ADD COLUMN rate {};
)sql",
                      dialect.real)},
  };
}

std::string links_since_sql(const char* placeholder) {
  return fmt::format(
      "SELECT {}, {} FROM links l JOIN runs r ON r.id = l.run WHERE COALESCE(r.started_ns, r.recorded_ns) >= {} "
      "ORDER BY {}, l.position",
      kRunColumns, kLinkColumns, placeholder, kRunOrder);
}

std::string hosts_since_sql(const char* placeholder) {
  return fmt::format(
      "SELECT {}, s.agent, count(*), sum(CASE WHEN s.passed = 0 THEN 1 ELSE 0 END) FROM streams s JOIN runs r ON "
      "r.id = s.run WHERE COALESCE(r.started_ns, r.recorded_ns) >= {} GROUP BY r.id, s.agent ORDER BY {}, s.agent",
      kRunColumns, placeholder, kRunOrder);
}

}  // namespace tusk::history_sql
