// A first hour with Tusk, as a new user spends it: the answers the controller gives when a run is
// interrupted or its report directory is used again. Real tusk-controller and agent processes
// (the engine double) over TLS on 127.0.0.1.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "tests/e2e/control_plane_fixture.hpp"

namespace tusk::testing {
namespace {

using namespace std::chrono_literals;

class FirstHourE2E : public ControlPlaneE2E {};

// Before: Ctrl-C 1.5 s into `--wait 20s` said "agents missing after 20 s (exit 3)", and the
// history kept it so; the interrupt was not mentioned.
TEST_F(FirstHourE2E, CtrlCWhileWaitingForAgentsSaysInterruptedWhenAndWhoWasMissing) {
  auto controller = start_controller(write_profile("5s"), "report", {"--wait", "20s"});
  auto agent = start_agent("lab-a", port_);
  ASSERT_TRUE(wait_for_text(controller->log_path(), "agent 'lab-a' registered", 15s)) << controller->log();
  controller->signal(SIGINT);
  const auto exit_code = controller->wait(15s);
  ASSERT_TRUE(exit_code.has_value()) << controller->log();
  EXPECT_EQ(*exit_code, 128 + SIGINT) << controller->log();
  const json report = read_report("report");
  const std::string conclusion = report["conclusion"];
  EXPECT_EQ(conclusion.rfind("interrupted by SIGINT ", 0), 0u) << conclusion;
  EXPECT_NE(conclusion.find("into the run, while waiting for agents (1 connected;"), std::string::npos) << conclusion;
  EXPECT_NE(conclusion.find("lab-b"), std::string::npos) << "the missing agent is named: " << conclusion;
  EXPECT_EQ(conclusion.find("after 20 s"), std::string::npos) << conclusion;
  ASSERT_TRUE(report.contains("interrupted")) << report.dump(2);
  EXPECT_LE(report["started"].get<std::string>(), report["interrupted"].get<std::string>());
  EXPECT_LE(report["interrupted"].get<std::string>(), report["finished"].get<std::string>());
  EXPECT_NE(controller->log().find("result: " + conclusion + " (exit 130)"), std::string::npos) << controller->log();
}

TEST_F(FirstHourE2E, SigtermDuringATestSaysWhichTestItInterruptedAndNeverReadsAsAPass) {
  auto controller = start_controller(write_profile("60s"), "report");
  auto a = start_agent("lab-a", port_);
  auto b = start_agent("lab-b", port_);
  ASSERT_TRUE(wait_for_text(controller->log_path(), "test 0 'double-pairs'", 20s)) << controller->log();
  std::this_thread::sleep_for(2s);
  controller->signal(SIGTERM);
  const auto exit_code = controller->wait(30s);
  ASSERT_TRUE(exit_code.has_value()) << controller->log();
  EXPECT_EQ(*exit_code, 128 + SIGTERM) << controller->log();
  const json report = read_report("report");
  const std::string conclusion = report["conclusion"];
  EXPECT_EQ(conclusion.rfind("interrupted by SIGTERM ", 0), 0u) << conclusion;
  EXPECT_NE(conclusion.find("during test 0 'double-pairs'"), std::string::npos) << conclusion;
}

// Before: the second run replaced the first run's report.json, junit.xml and report.html.
TEST_F(FirstHourE2E, ASecondRunIntoTheSameDirectoryIsRefusedAndTheFirstReportStays) {
  const std::string profile = write_profile("1s");
  {
    auto controller = start_controller(profile, "report");
    auto a = start_agent("lab-a", port_);
    auto b = start_agent("lab-b", port_);
    ASSERT_EQ(controller->wait(60s).value_or(-1), 0) << controller->log();
  }
  const std::string first = read_file(dir_ + "/report/report.json");
  const json report = json::parse(first);
  auto again = start_controller(profile, "report");
  const auto exit_code = again->wait(15s);
  ASSERT_TRUE(exit_code.has_value()) << again->log();
  EXPECT_EQ(*exit_code, 2) << again->log();
  EXPECT_NE(again->log().find("already holds run " + report["run_id"].get<std::string>() + "'s report"),
            std::string::npos)
      << again->log();
  EXPECT_NE(again->log().find("nothing was started"), std::string::npos) << again->log();
  EXPECT_EQ(read_file(dir_ + "/report/report.json"), first);
}

// docs/real-cluster.md's commands, in its order, for four agents on 127.0.0.1 whose engines are
// doubles: host list, certificates, configs, --check-config, agents, inventory, plan, run of the
// starter profile (its minutes cut to seconds), report --text.
TEST_F(FirstHourE2E, TheRealClusterPageWalksFromAHostListToAReadReport) {
  const std::vector<std::string> hosts{"rack1-gpu01", "rack1-gpu02", "rack1-gpu03", "rack1-gpu04"};
  std::ofstream(dir_ + "/hosts.txt") << "# rack 1\n"
                                     << hosts[0] << "\n"
                                     << hosts[1] << "  # spare PSU\n\n"
                                     << hosts[2] << "\n"
                                     << hosts[3] << "\n";
  const std::string source = tusk::build_paths::source_dir();
  ASSERT_EQ(std::system(("bash " + source + "/scripts/make-certs.sh " + dir_ + "/rack-certs --hosts " + dir_ +
                         "/hosts.txt >" + dir_ + "/make-certs.log 2>&1")
                            .c_str()),
            0)
      << read_file(dir_ + "/make-certs.log");
  const std::string certs = dir_ + "/rack-certs/";
  // One configuration per host, as the page's template has it (the name is each host's; all four
  // share this machine, so it is written out here).
  for (const auto& host : hosts) {
    std::ofstream(dir_ + "/" + host + ".yaml")
        << "controller: 127.0.0.1:" << port_ << "\nname: " << host << "\ntls:\n  ca: " << certs
        << "ca.pem\n  cert: " << certs << host << ".pem\n  key: " << certs << host
        << ".key\nlimits:\n  max_rate: 400Gbps\n";
    Process check({tusk::build_paths::agent_bin(), "--config", dir_ + "/" + host + ".yaml", "--check-config"},
                  dir_ + "/check-" + host + ".log");
    ASSERT_EQ(check.wait(15s), 0) << check.log();
  }
  std::vector<std::unique_ptr<Process>> agents;
  for (const auto& host : hosts) {
    agents.push_back(std::make_unique<Process>(
        std::vector<std::string>{tusk::build_paths::agent_double_bin(), "--config", dir_ + "/" + host + ".yaml"},
        dir_ + "/agent-" + host + ".log"));
  }
  const std::vector<std::string> tls{"--ca",  certs + "ca.pem",        "--cert", certs + "controller.pem",
                                     "--key", certs + "controller.key"};
  const auto controller_command = [&](std::vector<std::string> words) {
    words.insert(words.begin(), tusk::build_paths::controller_bin());
    if (words[1] == "inventory" || words[1] == "run") {
      words.insert(words.end(), tls.begin(), tls.end());
      words.insert(words.end(), {"--listen", "127.0.0.1:" + std::to_string(port_)});
    }
    return words;
  };
  {
    Process inventory(controller_command({"inventory", "--expect", "4", "--wait", "30s"}), dir_ + "/inventory.log");
    ASSERT_EQ(inventory.wait(40s), 0) << inventory.log();
    for (const auto& host : hosts) EXPECT_NE(inventory.log().find(host), std::string::npos) << inventory.log();
  }
  // The starter profile as shipped, its minutes cut to seconds.
  std::string profile = read_file(source + "/profiles/rack-starter-400g.yaml");
  for (const auto& [from, to] : {std::pair{"duration: 2m", "duration: 3s"}, std::pair{"duration: 10m", "duration: 3s"},
                                 std::pair{"sample_interval: 5s", "sample_interval: 1s"}}) {
    ASSERT_NE(profile.find(from), std::string::npos) << from;
    profile.replace(profile.find(from), std::string(from).size(), to);
  }
  const std::string profile_path = write_profile_text(profile);
  {
    Process plan(
        controller_command({"plan", profile_path, "--agents", "rack1-gpu01,rack1-gpu02,rack1-gpu03,rack1-gpu04"}),
        dir_ + "/plan.log");
    ASSERT_EQ(plan.wait(15s), 0) << plan.log();
    EXPECT_NE(plan.log().find("per agent, shared by its"), std::string::npos) << plan.log();
  }
  const std::string out = dir_ + "/reports/rack1-burn-in-1";
  {
    Process run(controller_command({"run", profile_path, "--out", out, "--no-progress", "--no-history"}),
                dir_ + "/run.log");
    const auto exit_code = run.wait(120s);
    ASSERT_TRUE(exit_code.has_value()) << run.log();
    // The doubles move no real traffic: the 375 Gb/s floor may fail them; the run itself completes.
    EXPECT_TRUE(*exit_code == 0 || *exit_code == 1) << run.log();
  }
  Process text(controller_command({"report", out, "--text"}), dir_ + "/report-text.log");
  ASSERT_EQ(text.wait(15s), 0) << text.log();
  const json report = json::parse(read_file(out + "/report.json"));
  const std::string summary = text.log();
  EXPECT_EQ(summary.rfind("Tusk run " + report["run_id"].get<std::string>() + " — profile 'rack-starter-400g'", 0), 0u)
      << summary;
  EXPECT_NE(summary.find("test 0 'nic-bandwidth' (rdma engine, 3 s)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("test 1 'mesh-checked' (rdma engine, 3 s)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("rack1-gpu04"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\nresult: " + report["conclusion"].get<std::string>() + " (exit " +
                         std::to_string(report["exit_code"].get<int>()) + ")\n"),
            std::string::npos)
      << summary;
}

}  // namespace
}  // namespace tusk::testing
