// A first hour with Tusk, as a new user spends it: the answers the controller gives when a run is
// interrupted or its report directory is used again. Real tusk-controller and agent processes
// (the engine double) over TLS on 127.0.0.1.
#include <gtest/gtest.h>

#include <csignal>
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
  EXPECT_NE(again->log().find("already holds run " + report["run_id"].get<std::string>() + "'s report"), std::string::npos)
      << again->log();
  EXPECT_NE(again->log().find("nothing was started"), std::string::npos) << again->log();
  EXPECT_EQ(read_file(dir_ + "/report/report.json"), first);
}

}  // namespace
}  // namespace tusk::testing
