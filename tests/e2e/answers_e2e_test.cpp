// Issue 57: answers an operator acts on, each true for its input, on the real controller with agent
// doubles on 127.0.0.1. `cabling: enforce` that cannot check refuses to start; `cabling: check` that
// cannot check says so in the report; neither passes silently.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/e2e/control_plane_fixture.hpp"

namespace tusk::testing {
namespace {

using namespace std::chrono_literals;

// The agents' data-plane addresses in no topology, and no switch with a management address: the
// file is valid, and nothing can hear LLDP on any cable it names.
constexpr auto kTopology = R"(devices:
  lab-a:
    interfaces: {p0: 10.99.0.1}
  lab-b:
    interfaces: {p0: 10.99.0.2}
  leaf:
    interfaces: {e1: ~, e2: ~}
links:
  - lab-a:p0 <-> leaf:e1
  - lab-b:p0 <-> leaf:e2
)";

class CablingAnswers : public ControlPlaneE2E {
 protected:
  std::string profile_with(const std::string& cabling) {
    std::string text = kProfileTemplate;
    text.replace(text.find("{duration}"), 10, "1s");
    return write_profile_text("cabling: " + cabling + "\n" + text);
  }
  std::string topology() {
    const std::string path = dir_ + "/topology.yaml";
    std::ofstream(path) << kTopology;
    return path;
  }
};

// Before: the run passed, exit 0, nothing said, report.json "cabling": null.
TEST_F(CablingAnswers, EnforceWithoutATopologyFileRefusesToStart) {
  auto controller = start_controller(profile_with("enforce"), "no-topology");
  ASSERT_EQ(controller->wait(30s), 2) << controller->log();
  EXPECT_NE(controller->log().find("cabling: enforce checks the cabling against a topology file before any traffic: "
                                   "give --topology FILE"),
            std::string::npos)
      << controller->log();
  EXPECT_NE(controller->log().find("nothing was started"), std::string::npos) << controller->log();
  EXPECT_FALSE(fs::exists(dir_ + "/no-topology/report.json"));
}

TEST_F(CablingAnswers, EnforceWithNothingThatHearsLldpStartsNoTraffic) {
  auto controller = start_controller(profile_with("enforce"), "nothing-heard", {"--topology", topology()});
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);
  ASSERT_EQ(controller->wait(60s), 2) << controller->log();
  EXPECT_NE(controller->log().find("cabling: enforce: nothing was checked, so no traffic was started: no switch to "
                                   "read"),
            std::string::npos)
      << controller->log();
  const json report = read_report("nothing-heard");
  ASSERT_TRUE(report["cabling"].is_object()) << report.dump(1).substr(0, 2000);
  EXPECT_EQ(report["cabling"]["checked"], false);
  EXPECT_EQ(report["tests"].size(), 0u) << "no test ran";
  EXPECT_EQ(agent_a->log().find("test 0 started"), std::string::npos) << agent_a->log();
}

TEST_F(CablingAnswers, CheckThatCannotCheckRunsAndSaysSo) {
  auto controller = start_controller(profile_with("check"), "check-nothing", {"--topology", topology()});
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);
  ASSERT_EQ(controller->wait(60s), 0) << controller->log();
  const json report = read_report("check-nothing");
  ASSERT_TRUE(report["cabling"].is_object()) << report.dump(1).substr(0, 2000);
  EXPECT_EQ(report["cabling"]["checked"], false);
  EXPECT_NE(report["cabling"]["text"].get<std::string>().find("cabling: not checked: no switch to read"),
            std::string::npos)
      << report["cabling"].dump(1);
  EXPECT_NE(controller->log().find("cabling: not checked: "), std::string::npos) << "in the summary too";
}

}  // namespace
}  // namespace tusk::testing
