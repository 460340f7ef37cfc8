// Run history: the SQLite file's schema and its version, recording a report as rows in one
// transaction, and reading runs and trends back, in an SQLite file and in PostgreSQL alike.
#include "controller/history/run_history.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "common/clock.hpp"
#include "tests/controller/history/history_test_reports.hpp"
#include "tests/support/throwaway_postgres.hpp"

namespace tusk::testing {
namespace {

using json = nlohmann::ordered_json;

const StreamRow* find_stream(const RunRows& rows, const std::string& agent, const std::string& stream_id) {
  for (const auto& row : rows.streams) {
    if (row.agent == agent && row.stream_id == stream_id) return &row;
  }
  return nullptr;
}

// The two stores a history may be kept in, held to the same answers: an SQLite file and a database
// of a throw-away PostgreSQL server of the test's own.
class EveryStore : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "sqlite") {
      where_ = scratch_.path("history.sqlite");
    } else {
      const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
      where_ = ThrowawayPostgres::shared().fresh_database(info->name());
    }
  }
  HistoryScratch scratch_;
  std::string where_;
};

INSTANTIATE_TEST_SUITE_P(Stores, EveryStore, ::testing::Values("sqlite", "postgresql"),
                         [](const ::testing::TestParamInfo<std::string>& store) { return store.param; });

TEST(RunHistory, CreatesTheFileAndItsDirectoriesAtTheSchemaVersionInWalMode) {
  HistoryScratch scratch;
  const std::string path = scratch.path("deep/er/history.sqlite");
  RunHistory history(path);
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(history.schema_version(), 3);
  EXPECT_EQ(kHistorySchemaVersion, 3);

  SQLite::Database raw(path);
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), 3);
  EXPECT_EQ(raw.execAndGet("PRAGMA journal_mode").getString(), "wal");
  for (const char* table : {"runs", "run_agents", "streams", "links"}) EXPECT_TRUE(raw.tableExists(table)) << table;
}

TEST_P(EveryStore, OpeningAgainKeepsWhatWasRecorded) {
  const std::string path = where_;
  RunHistory(path).record_run(sample_report("run-1"), "/reports/run-1");
  RunHistory again(path);
  EXPECT_EQ(again.schema_version(), kHistorySchemaVersion);
  ASSERT_EQ(again.list_runs().size(), 1u);
}

// A re-test (run --only-failing) is recorded with the run it tested again; a file of version 1
// (before re-tests) is upgraded in place, its runs kept, none a re-test.
TEST(RunHistory, AReTestNamesItsRunAndAVersionOneFileIsUpgraded) {
  HistoryScratch scratch;
  const std::string path = scratch.path("history.sqlite");
  RunHistory(path).record_run(sample_report("run-1", "2026-11-24T08:00:00.000Z"), "/r/1");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec(
        "DROP INDEX runs_by_retest_of; ALTER TABLE runs DROP COLUMN retest_of; ALTER TABLE links DROP COLUMN kind; "
        "ALTER TABLE links DROP COLUMN rate; PRAGMA user_version = 1");
  }
  RunHistory history(path);
  EXPECT_EQ(history.schema_version(), kHistorySchemaVersion);
  json retest = sample_report("run-2", "2026-11-25T08:00:00.000Z");
  retest["retest_of"] = "run-1";
  history.record_run(retest, "/r/2");
  const auto runs = history.list_runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].retest_of, "");
  EXPECT_EQ(runs[1].retest_of, "run-1");
  EXPECT_EQ(history.find_run("run-2").value_or(RunRow{}).retest_of, "run-1");
}

// A file of version 2 (before a suspect's fault kind and rate) is upgraded in place: its runs kept,
// their suspects without a kind, and new runs recorded with theirs.
TEST(RunHistory, AVersionTwoFileIsUpgradedAndItsSuspectsKeepNoKind) {
  HistoryScratch scratch;
  const std::string path = scratch.path("history.sqlite");
  RunHistory(path).record_run(sample_report("run-1", "2026-11-24T08:00:00.000Z"), "/r/1");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("ALTER TABLE links DROP COLUMN kind; ALTER TABLE links DROP COLUMN rate; PRAGMA user_version = 2");
  }
  RunHistory history(path);
  EXPECT_EQ(history.schema_version(), 3);
  history.record_run(sample_report("run-2", "2026-11-25T08:00:00.000Z"), "/r/2");
  const auto before = history.load_run("run-1");
  const auto after = history.load_run("run-2");
  ASSERT_TRUE(before && after);
  ASSERT_EQ(before->links.size(), 2u);
  EXPECT_EQ(before->links[0].role, "suspect");
  EXPECT_EQ(before->links[0].kind, "");
  EXPECT_FALSE(before->links[0].rate);
  EXPECT_EQ(after->links[0].kind, "loss");
}

TEST(RunHistory, RefusesAFileOfANewerSchemaNamingTheFile) {
  HistoryScratch scratch;
  const std::string path = scratch.path("history.sqlite");
  RunHistory(path).record_run(sample_report("run-1"), "/reports/run-1");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("PRAGMA user_version = 7");
  }
  const std::string error = error_of([&] { RunHistory{path}; });
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("schema version 7 is newer"), std::string::npos) << error;
  // Refused, not rewritten.
  SQLite::Database raw(path);
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), 7);
  EXPECT_EQ(raw.execAndGet("SELECT count(*) FROM runs").getInt(), 1);
}

TEST(RunHistory, RefusesAnotherProgramsDatabaseAndAFileThatIsNoDatabase) {
  HistoryScratch scratch;
  const std::string other = scratch.path("other.sqlite");
  {
    SQLite::Database raw(other, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec("CREATE TABLE notes (text TEXT)");
  }
  const std::string error = error_of([&] { RunHistory{other}; });
  EXPECT_NE(error.find(other + ": not a tusk run history"), std::string::npos) << error;

  const std::string text = scratch.path("text.sqlite");
  std::ofstream(text) << "this is not an SQLite file, and it is long enough to have a header of sorts\n";
  const std::string text_error = error_of([&] { RunHistory{text}; });
  EXPECT_NE(text_error.find(text), std::string::npos) << text_error;
}

TEST_P(EveryStore, RecordsARunAndLoadsEveryRowBack) {
  RunHistory history(where_);
  json report = sample_report("20261124T201950Z-c113");
  report["missing_agents"] = json::array({"lab-c"});
  history.record_run(report, "/reports/20261124T201950Z-c113");

  const auto rows = history.load_run("20261124T201950Z-c113");
  ASSERT_TRUE(rows);
  const RunRow& run = rows->run;
  EXPECT_EQ(run.run_id, "20261124T201950Z-c113");
  EXPECT_EQ(run.profile_name, "lab-dpdk-ber");
  EXPECT_EQ(run.profile_file, "profiles/lab-dpdk-ber.yaml");
  ASSERT_TRUE(run.started_ns);
  EXPECT_EQ(utc_iso_time(*run.started_ns), "2026-11-24T20:19:50.040Z");
  EXPECT_EQ(utc_iso_time(*run.finished_ns), "2026-11-24T20:20:21.700Z");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.conclusion, "all 2 tests passed");
  EXPECT_EQ(run.agents, (std::vector<std::string>{"lab-a", "lab-b", "lab-c"}));
  EXPECT_EQ(run.run_directory, "/reports/20261124T201950Z-c113");
  EXPECT_EQ(run.tusk_version, "0.1.0");

  ASSERT_EQ(rows->streams.size(), 7u);
  const StreamRow* received = find_stream(*rows, "lab-b", "rx:lab-a/1");
  ASSERT_NE(received, nullptr);
  EXPECT_EQ(received->test, "cable");
  EXPECT_EQ(received->engine, "dpdk");
  EXPECT_EQ(received->peer, "lab-a");
  EXPECT_EQ(received->link, "lab-a->lab-b");  // the receiver's stream carried lab-a's traffic
  EXPECT_TRUE(received->passed);
  EXPECT_DOUBLE_EQ(received->throughput_bps.value_or(-1), 238999219.25);
  EXPECT_DOUBLE_EQ(received->loss_ratio.value_or(-1), 0);
  EXPECT_DOUBLE_EQ(received->bit_errors.value_or(-1), 0);
  EXPECT_DOUBLE_EQ(received->bits_compared.value_or(-1), 6963850080);
  EXPECT_DOUBLE_EQ(received->ber_upper_bound.value_or(-1), 4.30e-10);
  EXPECT_DOUBLE_EQ(received->latency_p99_ns.value_or(-1), 236543);
  EXPECT_FALSE(received->retransmits);
  const StreamRow* sent = find_stream(*rows, "lab-a", "tx:lab-b");
  ASSERT_NE(sent, nullptr);
  EXPECT_EQ(sent->link, "lab-a->lab-b");
  EXPECT_FALSE(sent->loss_ratio);
  EXPECT_FALSE(sent->ber_upper_bound);
  const StreamRow* port = find_stream(*rows, "lab-a", "port:net_af_packet0");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->link, "");
  const StreamRow* qp = find_stream(*rows, "lab-b", "sink:lab-a/qp0");
  ASSERT_NE(qp, nullptr);
  EXPECT_EQ(qp->flow, "10.0.1.1:49152 -> 10.0.2.1:4791 udp");
  EXPECT_EQ(qp->link, "lab-a->lab-b");
  EXPECT_FALSE(qp->passed);
  EXPECT_DOUBLE_EQ(qp->retransmits.value_or(-1), 40);
  EXPECT_DOUBLE_EQ(qp->completion_errors.value_or(-1), 0);

  ASSERT_EQ(rows->links.size(), 2u);
  EXPECT_EQ(rows->links[0].key, "s1:l2 -> l2:s1");  // the suspect first
  EXPECT_EQ(rows->links[0].name, "spine-1 eth2 -> leaf-2 eth1 (cable C7)");
  EXPECT_EQ(rows->links[0].role, "suspect");
  EXPECT_EQ(rows->links[0].confidence, "high");
  EXPECT_EQ(rows->links[0].kind, "loss");
  EXPECT_DOUBLE_EQ(rows->links[0].rate.value_or(-1), 0.02);
  EXPECT_EQ(rows->links[0].flows, 1);
  EXPECT_EQ(rows->links[0].failing_flows, 1);
  EXPECT_EQ(rows->links[1].key, "l1:s1 -> s1:l1");
  EXPECT_EQ(rows->links[1].role, "crossed");
  EXPECT_EQ(rows->links[1].kind, "");
  EXPECT_FALSE(rows->links[1].rate);

  EXPECT_FALSE(history.load_run("no-such-run"));
}

TEST_P(EveryStore, AReportThatNamesSenderAndReceiverGivesTheLinkItNames) {
  json report = sample_report("run-1");
  auto& stream = report["tests"][0]["streams"][4];  // lab-b's rx:lab-a/1
  stream["sender"] = "host-x";
  stream["receiver"] = "host-y";
  const RunRows rows = rows_of_report(report, "/reports/run-1");
  EXPECT_EQ(rows.streams[4].link, "host-x->host-y");
}

// A schedule's clean flows are counted per link, not listed: each link's row counts them too, and
// the link no listed flow crossed has its row.
TEST_P(EveryStore, AScheduleLinksCleanFlowsCountInItsLinkRows) {
  json report = sample_report("run-1");
  report["tests"][1]["localisation"]["clean_flows_by_link"] = {{"l1:s1 -> s1:l1", 40}, {"l2:s2 -> s2:l2", 7}};
  const RunRows rows = rows_of_report(report, "/reports/run-1");
  ASSERT_EQ(rows.links.size(), 3u);
  EXPECT_EQ(rows.links[0].key, "s1:l2 -> l2:s1");
  EXPECT_EQ(rows.links[0].flows, 1);
  EXPECT_EQ(rows.links[1].key, "l1:s1 -> s1:l1");
  EXPECT_EQ(rows.links[1].flows, 41);
  EXPECT_EQ(rows.links[1].failing_flows, 1);
  EXPECT_EQ(rows.links[2].key, "l2:s2 -> s2:l2");
  EXPECT_EQ(rows.links[2].flows, 7);
  EXPECT_EQ(rows.links[2].failing_flows, 0);
  // A count past an int's range is bounded, not wrapped.
  report["tests"][1]["localisation"]["clean_flows_by_link"] = {{"l1:s1 -> s1:l1", ~0ull}};
  EXPECT_EQ(rows_of_report(report, "/reports/run-1").links[1].flows, std::numeric_limits<int>::max());
}

// Reports of this build (schema /2: bins, sample ranges, windows) import as /1 reports do, and
// both keep the same rows: the history reads neither the series nor the bins.
TEST_P(EveryStore, AReportOfEitherSchemaImportsToTheSameRows) {
  json report = sample_report("run-1");
  ASSERT_EQ(report["schema"], "tusk.report/1");
  const RunRows old_rows = rows_of_report(report, "/reports/run-1");
  report["schema"] = "tusk.report/2";
  for (auto& stream : report["tests"][0]["streams"]) {
    stream.erase("series");
    stream["bins"] = {{"index", {1, 2}}, {"elapsed_ms", {1000, 2000}}, {"throughput_bps", {1e9, 1e9}}};
  }
  const RunRows new_rows = rows_of_report(report, "/reports/run-1");
  ASSERT_EQ(new_rows.streams.size(), old_rows.streams.size());
  for (std::size_t i = 0; i < new_rows.streams.size(); ++i) {
    EXPECT_EQ(new_rows.streams[i].link, old_rows.streams[i].link);
    EXPECT_EQ(new_rows.streams[i].passed, old_rows.streams[i].passed);
  }
  report["schema"] = "tusk.report/3";
  EXPECT_THROW(rows_of_report(report, "/reports/run-1"), ReportUnreadable);
}

TEST_P(EveryStore, RecordingTheSameRunAgainReplacesIt) {
  RunHistory history(where_);
  history.record_run(sample_report("run-1"), "/reports/run-1");
  json again = sample_report("run-1");
  again["conclusion"] = "re-recorded";
  again["tests"].erase(1);
  again["tests"][0]["streams"].erase(0);
  history.record_run(again, "/elsewhere/run-1");

  const auto runs = history.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].conclusion, "re-recorded");
  EXPECT_EQ(runs[0].run_directory, "/elsewhere/run-1");
  const auto rows = history.load_run("run-1");
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->streams.size(), 5u);
  EXPECT_TRUE(rows->links.empty());
}

TEST_P(EveryStore, AMalformedReportNamesTheFieldAndWritesNothing) {
  RunHistory history(where_);
  history.record_run(sample_report("run-1"), "/reports/run-1");

  struct Case {
    std::function<void(json&)> spoil;
    std::string message;
  };
  const std::vector<Case> cases{
      {[](json& r) { r["tests"][0]["streams"][1]["passed"] = "yes"; },
       "tests[0].streams[1].passed: expected a boolean, found string"},
      {[](json& r) { r["tests"][0]["streams"][4]["metrics"]["throughput_bps"] = "fast"; },
       "tests[0].streams[4].metrics.throughput_bps: expected a number, found string"},
      {[](json& r) { r["tests"][0]["streams"][4]["ber"]["upper_bound"] = json::array(); },
       "tests[0].streams[4].ber.upper_bound: expected a number, found array"},
      {[](json& r) { r["tests"][1]["streams"][0].erase("agent"); }, "tests[1].streams[0].agent: missing"},
      {[](json& r) { r["tests"][1]["localisation"]["flows"][0]["links"] = "l1"; },
       "tests[1].localisation.flows[0].links: expected an array, found string"},
      {[](json& r) { r["tests"][1]["localisation"]["clean_flows_by_link"] = json::array(); },
       "tests[1].localisation.clean_flows_by_link: expected an object, found array"},
      {[](json& r) {
         r["tests"][1]["localisation"]["clean_flows_by_link"] = {{"l1:s1 -> s1:l1", -3}};
       },
       "tests[1].localisation.clean_flows_by_link.l1:s1 -> s1:l1: expected a count, found number"},
      {[](json& r) { r["tests"] = json::object(); }, "tests: expected an array, found object"},
      {[](json& r) { r["exit_code"] = 0.5; }, "exit_code: expected an integer, found number"},
      {[](json& r) { r["started"] = "yesterday"; }, "started: 'yesterday' is not a UTC time"},
      {[](json& r) { r["schema"] = "tusk.report/0"; }, "schema: 'tusk.report/0' is not a report this build reads"},
      {[](json& r) { r.erase("profile"); }, "profile: missing"},
      {[](json& r) { r = json::array(); }, "report: expected a JSON object, found array"},
  };
  for (const auto& [spoil, message] : cases) {
    SCOPED_TRACE(message);
    // The same run id: a failed re-record must leave the recorded run as it was.
    json report = sample_report("run-1");
    report["conclusion"] = "spoilt";
    spoil(report);
    const std::string error = error_of([&] { history.record_run(report, "/reports/run-1"); });
    EXPECT_NE(error.find(message), std::string::npos) << error;
    // A new run id: nothing of it is written.
    json fresh = sample_report("run-2");
    spoil(fresh);
    EXPECT_THROW(history.record_run(fresh, "/reports/run-2"), ReportUnreadable);
  }
  const auto runs = history.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].conclusion, "all 2 tests passed");
  EXPECT_EQ(history.load_run("run-1")->streams.size(), 7u);
}

TEST_P(EveryStore, AFailureMidwayThroughARunRollsAllOfItBack) {
  RunHistory history(where_);
  history.record_run(sample_report("run-1"), "/reports/run-1");

  // Rows that pass no report check (rows_of_report refuses an empty stream id): the database's own
  // constraint fails on the third stream, after the run and two streams were inserted.
  RunRows rows = rows_of_report(sample_report("run-1"), "/reports/run-1");
  rows.run.conclusion = "half written";
  rows.streams[2].stream_id = "";
  const std::string error = error_of([&] { history.record_rows(rows); });
  EXPECT_NE(error.find(history.path() + ": cannot record run run-1"), std::string::npos) << error;
  const auto kept = history.load_run("run-1");
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->run.conclusion, "all 2 tests passed");
  EXPECT_EQ(kept->streams.size(), 7u);

  rows.run.run_id = "run-2";
  EXPECT_THROW(history.record_rows(rows), HistoryError);
  EXPECT_FALSE(history.find_run("run-2"));
  EXPECT_EQ(history.list_runs().size(), 1u);
  // Nothing of run-2 was left behind: every stream row a trend finds is run-1's.
  for (const auto& stream : kept->streams) {
    for (const auto& row : history.stream_trend(stream.agent + ":" + stream.stream_id)) {
      EXPECT_EQ(row.run.run_id, "run-1") << stream.stream_id;
    }
  }
}

RunFilter filter(const std::string& profile, const std::string& agent, std::size_t limit = 0) {
  RunFilter out;
  out.profile = profile;
  out.agent = agent;
  out.limit = limit;
  return out;
}

TEST_P(EveryStore, ListsRunsOldestFirstByProfileAndAgent) {
  RunHistory history(where_);
  // Recorded out of order: the list follows the runs' start times.
  history.record_run(sample_report("run-3", "2026-11-26T08:00:00.000Z"), "/r/3");
  history.record_run(sample_report("run-1", "2026-11-24T08:00:00.000Z"), "/r/1");
  json other = sample_report("run-2", "2026-11-25T08:00:00.000Z", "leaf-spine");
  other["agents"] = json::array({{{"name", "leaf-1"}}});
  history.record_run(other, "/r/2");

  const auto ids = [](const std::vector<RunRow>& runs) {
    std::vector<std::string> out;
    for (const auto& run : runs) out.push_back(run.run_id);
    return out;
  };
  EXPECT_EQ(ids(history.list_runs()), (std::vector<std::string>{"run-1", "run-2", "run-3"}));
  EXPECT_EQ(ids(history.list_runs(filter("lab-dpdk-ber", ""))), (std::vector<std::string>{"run-1", "run-3"}));
  EXPECT_EQ(ids(history.list_runs(filter("", "leaf-1"))), (std::vector<std::string>{"run-2"}));
  EXPECT_EQ(ids(history.list_runs(filter("", "lab-b", 1))), (std::vector<std::string>{"run-3"}));
  EXPECT_TRUE(history.list_runs(filter("nothing", "")).empty());
}

TEST_P(EveryStore, FollowsAStreamAcrossRunsByItsHostsItsStreamIdOrItsFlow) {
  RunHistory history(where_);
  history.record_run(sample_report("run-1", "2026-11-24T08:00:00.000Z"), "/r/1");
  json worse = sample_report("run-2", "2026-11-25T08:00:00.000Z");
  worse["tests"][0]["streams"][4] = received_stream("lab-b", "lab-a", 1200, 1.8e-7);
  history.record_run(worse, "/r/2");

  // lab-a -> lab-b: lab-a's sender, lab-b's receiver and the routed QP into lab-b, in each run.
  const auto link = history.stream_trend("lab-a->lab-b");
  ASSERT_EQ(link.size(), 6u);
  EXPECT_EQ(link[0].run.run_id, "run-1");
  EXPECT_EQ(link[5].run.run_id, "run-2");
  EXPECT_EQ(history.stream_trend("lab-a -> lab-b").size(), 6u);

  const auto stream = history.stream_trend("lab-b:rx:lab-a/1");
  ASSERT_EQ(stream.size(), 2u);
  EXPECT_DOUBLE_EQ(stream[0].stream.bit_errors.value_or(-1), 0);
  EXPECT_DOUBLE_EQ(stream[1].stream.bit_errors.value_or(-1), 1200);
  EXPECT_FALSE(stream[1].stream.passed);
  EXPECT_EQ(stream[1].run.agents, (std::vector<std::string>{"lab-a", "lab-b"}));
  EXPECT_EQ(history.stream_trend("rx:lab-a/1").size(), 2u);
  EXPECT_EQ(history.stream_trend("10.0.1.1:49152 -> 10.0.2.1:4791 udp").size(), 2u);
  EXPECT_EQ(history.stream_trend("rx:lab-a/1", filter("", "", 1)).size(), 1u);
  EXPECT_TRUE(history.stream_trend("lab-x->lab-y").empty());

  const auto fabric = history.link_trend("spine-1 eth2 -> leaf-2 eth1 (cable C7)");
  ASSERT_EQ(fabric.size(), 2u);
  EXPECT_EQ(fabric[1].link.confidence, "high");
  EXPECT_EQ(history.link_trend("s1:l2->l2:s1").size(), 2u);
}

TEST(RunHistory, TheDefaultFileIsUnderXdgDataHomeElseHome) {
  const char* saved_data = std::getenv("XDG_DATA_HOME");
  const char* saved_home = std::getenv("HOME");
  const std::string data = saved_data ? saved_data : "";
  const std::string home = saved_home ? saved_home : "";
  setenv("XDG_DATA_HOME", "/data", 1);
  EXPECT_EQ(default_history_path(), "/data/tusk/history.sqlite");
  setenv("XDG_DATA_HOME", "", 1);
  setenv("HOME", "/home/me", 1);
  EXPECT_EQ(default_history_path(), "/home/me/.local/share/tusk/history.sqlite");
  if (saved_data) {
    setenv("XDG_DATA_HOME", data.c_str(), 1);
  } else {
    unsetenv("XDG_DATA_HOME");
  }
  if (saved_home) setenv("HOME", home.c_str(), 1);
}

TEST_P(EveryStore, ReportTimesReadBackAsWritten) {
  const auto ns = parse_report_time("2026-11-24T20:19:50.040Z");
  ASSERT_TRUE(ns);
  EXPECT_EQ(utc_iso_time(*ns), "2026-11-24T20:19:50.040Z");
  EXPECT_FALSE(parse_report_time("2026-11-24 20:19:50"));
  EXPECT_FALSE(parse_report_time("2026-11-24T20:19:50.040+01"));
  // Out of range fields (found by fuzz/report_files), and a year past what 64-bit nanoseconds hold.
  EXPECT_FALSE(parse_report_time("2026-13-24T20:19:50.040Z"));
  EXPECT_FALSE(parse_report_time("2026-11-24T20:99:50.040Z"));
  EXPECT_FALSE(parse_report_time("2426-11-24T20:19:50.040Z"));
  EXPECT_FALSE(parse_report_time("2026-99-99T99:99:99.999Z"));
}

}  // namespace
}  // namespace tusk::testing
