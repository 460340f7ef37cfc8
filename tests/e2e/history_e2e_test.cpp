// A fleet's shared history (issue 62), end to end with real controllers and agent doubles against a
// throw-away PostgreSQL server: two controllers running at once record both runs whole, `history`
// lists both and `compare` works across them; a server that goes away before a run ends loses
// nothing: the report is complete, the row is queued in the run directory and imported later.
#include <gtest/gtest.h>

#include <set>

#include "tests/e2e/control_plane_fixture.hpp"
#include "tests/support/throwaway_postgres.hpp"

namespace tusk::testing {
namespace {

using namespace std::chrono_literals;

class SharedHistoryE2E : public ControlPlaneE2E {
 protected:
  // `tusk-controller run` into the history at `location`, listening on `port` with the
  // certificates in `certs`.
  std::unique_ptr<Process> run_into(const std::string& location, const std::string& profile, const std::string& out,
                                    int port, const std::string& certs) {
    return std::make_unique<Process>(
        std::vector<std::string>{tusk::build_paths::controller_bin(), "run", profile, "--listen",
                                 "127.0.0.1:" + std::to_string(port), "--ca", certs + "/ca.pem", "--cert",
                                 certs + "/controller.pem", "--key", certs + "/controller.key", "--out",
                                 dir_ + "/" + out, "--no-progress", "--history", location},
        dir_ + "/controller-" + out + ".log");
  }

  std::unique_ptr<Process> agent_of(const std::string& name, int port, const std::string& certs,
                                    const std::string& log) {
    return std::make_unique<Process>(
        std::vector<std::string>{tusk::build_paths::agent_double_bin(), "--controller",
                                 "127.0.0.1:" + std::to_string(port), "--name", name, "--ca", certs + "/ca.pem",
                                 "--cert", certs + "/" + name + ".pem", "--key", certs + "/" + name + ".key"},
        dir_ + "/" + log);
  }

  // `tusk-controller ARGS...`: its exit status and what it printed.
  std::pair<int, std::string> controller(std::vector<std::string> arguments, const std::string& log) {
    arguments.insert(arguments.begin(), tusk::build_paths::controller_bin());
    Process process(arguments, dir_ + "/" + log);
    const int status = process.wait(60s).value_or(-100);
    return {status, read_file(dir_ + "/" + log)};
  }
};

// Two pods' controllers, each with its own CA and its own agents, run at once into one database.
TEST_F(SharedHistoryE2E, TwoControllersAtOnceRecordBothRunsWholeAndCompareAcrossThem) {
  const std::string location = ThrowawayPostgres::shared().fresh_database("twocontrollers");
  const std::string profile = write_profile("4s");
  const std::string pod_b = dir_ + "/certs-b";
  ASSERT_TRUE(make_certs(pod_b, {"lab-a", "lab-b"})) << "make-certs.sh failed";
  const int port_b = free_port();
  auto first = run_into(location, profile, "pod-a", port_, dir_ + "/certs");
  auto second = run_into(location, profile, "pod-b", port_b, pod_b);
  auto a1 = agent_of("lab-a", port_, dir_ + "/certs", "agent-a1.log");
  auto b1 = agent_of("lab-b", port_, dir_ + "/certs", "agent-b1.log");
  auto a2 = agent_of("lab-a", port_b, pod_b, "agent-a2.log");
  auto b2 = agent_of("lab-b", port_b, pod_b, "agent-b2.log");
  ASSERT_EQ(first->wait(60s), 0) << first->log();
  ASSERT_EQ(second->wait(60s), 0) << second->log();
  for (const auto* run : {first.get(), second.get()}) {
    EXPECT_NE(run->log().find("run recorded in the history " + location), std::string::npos) << run->log();
  }
  const json report_a = read_report("pod-a");
  const json report_b = read_report("pod-b");

  const auto [listed, list] = controller({"history", "--history", location, "--json"}, "history.json");
  ASSERT_EQ(listed, 0) << list;
  std::set<std::string> runs;
  const json history = json::parse(list);
  for (const auto& run : history["runs"]) runs.insert(run["run_id"].get<std::string>());
  EXPECT_EQ(runs, (std::set<std::string>{report_a["run_id"], report_b["run_id"]})) << list;

  // The fabric's record over both controllers' runs: each host exercised twice, never blamed.
  const auto [recorded, fabric] = controller({"fabric", "--history", location, "--json"}, "fabric.json");
  ASSERT_EQ(recorded, 0) << fabric;
  const json record = json::parse(fabric);
  EXPECT_EQ(record["runs"].size(), 2u) << fabric;
  ASSERT_EQ(record["hosts"].size(), 2u) << fabric;
  for (const auto& host : record["hosts"]) {
    EXPECT_EQ(host["state"], "clean") << fabric;
    EXPECT_EQ(host["runs_exercised"], 2) << fabric;
  }

  // Across the two controllers' runs, by run id: the same streams, none worse.
  const auto [compared, comparison] =
      controller({"compare", report_a["run_id"], report_b["run_id"], "--history", location, "--json"}, "compare.json");
  ASSERT_EQ(compared, 0) << comparison;
  const json across = json::parse(comparison);
  EXPECT_GT(across["compared_streams"].get<int>(), 0) << comparison;
  EXPECT_TRUE(across["new_streams"].empty()) << comparison;
  // Each run whole: its report against its own row, stream for stream, nothing missing.
  for (const auto& [out, report] : {std::pair{"pod-a", report_a}, std::pair{"pod-b", report_b}}) {
    const auto [status, self] = controller(
        {"compare", dir_ + "/" + out, report["run_id"], "--history", location, "--json"}, std::string(out) + ".json");
    ASSERT_EQ(status, 0) << self;
    const json same = json::parse(self);
    EXPECT_EQ(same["regressions"].size(), 0u) << self;
    EXPECT_TRUE(same["new_streams"].empty()) << self;
    EXPECT_EQ(same["compared_streams"], across["compared_streams"]) << self;
  }
}

// The server stops while the run is under way: the run still passes and writes its report, the
// row is tried again, then queued in the run directory; once the server is back, `history
// --import` records it, nothing missing, and the queue file goes.
TEST_F(SharedHistoryE2E, AServerStoppedBeforeTheRunEndsLosesNothingTheRowIsQueuedAndImportedLater) {
  ThrowawayPostgres server(ThrowawayPostgres::Own{});
  const std::string location = server.fresh_database("serverdown");
  const std::string profile = write_profile("4s");
  auto run = run_into(location, profile, "run", port_, dir_ + "/certs");
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);
  ASSERT_TRUE(wait_for_text(agent_b->log_path(), "test 0 started", 30s)) << agent_b->log();
  server.stop();
  ASSERT_EQ(run->wait(60s), 0) << run->log();
  const json report = read_report("run");
  EXPECT_EQ(report["exit_code"], 0);
  const std::string queued = dir_ + "/run/history-queued.json";
  ASSERT_TRUE(fs::exists(queued)) << run->log();
  const json entry = json::parse(read_file(queued));
  EXPECT_EQ(entry["history"], location);
  EXPECT_EQ(entry["run_id"], report["run_id"]);
  EXPECT_NE(entry["error"].get<std::string>().find("cannot connect"), std::string::npos) << entry.dump();
  EXPECT_NE(run->log().find("(try 1 of 3)"), std::string::npos) << run->log();
  EXPECT_NE(run->log().find("queued in " + queued), std::string::npos) << run->log();

  server.start();
  const auto [imported, said] = controller({"history", "--import", dir_ + "/run", "--history", location}, "import.log");
  ASSERT_EQ(imported, 0) << said;
  EXPECT_NE(said.find("(queued there since "), std::string::npos) << said;
  EXPECT_FALSE(fs::exists(queued));
  const auto [status, self] =
      controller({"compare", dir_ + "/run", report["run_id"], "--history", location, "--json"}, "compare.json");
  ASSERT_EQ(status, 0) << self;
  const json same = json::parse(self);
  EXPECT_GT(same["compared_streams"].get<int>(), 0) << self;
  EXPECT_EQ(same["regressions"].size(), 0u) << self;
  EXPECT_TRUE(same["new_streams"].empty()) << self;
}

}  // namespace
}  // namespace tusk::testing
