// An authenticated but hostile agent against a real controller: what it sends beyond its plan is
// counted and dropped, and nothing it writes forges the operator's log or breaks a report.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/printable.hpp"
#include "tests/e2e/control_plane_fixture.hpp"
#include "tests/support/build_paths.hpp"

namespace tusk::testing {
namespace {

using namespace std::chrono_literals;

TEST_F(ControlPlaneE2E, AHostileAgentsStreamsPastItsPlanAndItsForgedTextsNeitherFloodNorForgeTheRun) {
  auto controller = start_controller(write_profile("3s"), "report");
  // Both agents' streams fail on bit errors, so a forged "passed" line would be a lie; lab-b is
  // the hostile one: 3,000 streams where its plan makes a handful, and text meant to forge lines.
  const std::map<std::string, std::string> honest{{"TUSK_DOUBLE_BIT_ERRORS_PER_S", "50"}};
  std::map<std::string, std::string> hostile = honest;
  hostile["TUSK_DOUBLE_STREAMS_PER_PEER"] = "3000";
  hostile["TUSK_DOUBLE_HOSTILE_TEXT"] = "1";
  auto agent_a = start_agent("lab-a", port_, honest);
  auto agent_b = start_agent("lab-b", port_, hostile);
  ASSERT_EQ(controller->wait(60s), 1) << controller->log();

  const json report = read_report("report");
  std::size_t from_b = 0;
  for (const auto& stream : report["tests"][0]["streams"]) from_b += stream["agent"] == "lab-b" ? 1 : 0;
  EXPECT_GT(from_b, 0u);
  EXPECT_LE(from_b, 16u) << "lab-b's streams past its plan must be dropped";
  const std::string faults = report["faults"].dump();
  EXPECT_NE(faults.find("more than the"), std::string::npos) << faults;
  EXPECT_NE(faults.find("its plan can make"), std::string::npos) << faults;
  EXPECT_NE(faults.find("a path of more than 12 hops"), std::string::npos) << faults;

  // No line of the controller's output (log and summary) is one the agent wrote.
  std::istringstream lines(controller->log());
  std::string line;
  while (std::getline(lines, line)) {
    EXPECT_EQ(line.rfind("result: all", 0), std::string::npos) << line;
    EXPECT_NE(line.rfind("2026-01-01T00:00:00.000", 0), 0u) << line;
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
    EXPECT_EQ(line.find('\x01'), std::string::npos) << line;
  }
  EXPECT_NE(controller->log().find("\\nresult: all 1 tests passed (exit 0)\\x1b[2J\\x01\xef\xbf\xbd"),
            std::string::npos)
      << "the forged id is shown, escaped";

  // What it said of itself arrived escaped, and the report counts what had to be.
  for (const auto& agent : report["agents"]) {
    if (agent["name"] == "lab-a") {
      EXPECT_EQ(agent["texts_escaped"], 0) << agent.dump();
    }
    if (agent["name"] != "lab-b") continue;
    EXPECT_GE(agent["texts_escaped"].get<int>(), 2) << agent.dump();
    EXPECT_NE(agent["notes"].dump().find("fine\\\\n2026-01-01T00:00:00.000"), std::string::npos) << agent.dump();
  }

  // junit.xml holds no character XML 1.0 forbids, and no byte that is not UTF-8.
  const std::string junit = read_file(dir_ + "/report/junit.xml");
  EXPECT_TRUE(std::none_of(junit.begin(), junit.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 && c != '\n' && c != '\r' && c != '\t';
  }));
  EXPECT_EQ(first_invalid_utf8(junit), std::string::npos);
}

// Before: `inventory` printed what an agent says of itself as each print chose (its engines went
// raw into the registry's log line) and counted nothing; now every text arrived escaped.
TEST_F(ControlPlaneE2E, AHostileAgentsTextsReachTheInventoryEscapedAndCounted) {
  Process controller({tusk::build_paths::controller_bin(), "inventory", "--expect", "2", "--wait", "30s", "--listen",
                      "127.0.0.1:" + std::to_string(port_), "--ca", cert("ca.pem"), "--cert", cert("controller.pem"),
                      "--key", cert("controller.key"), "--json", dir_ + "/inventory.json"},
                     dir_ + "/inventory.log");
  auto honest = start_agent("lab-a", port_);
  auto hostile = start_agent("lab-b", port_, {{"TUSK_DOUBLE_HOSTILE_TEXT", "1"}});
  ASSERT_EQ(controller.wait(40s), 0) << controller.log();
  const std::string output = controller.log();
  EXPECT_EQ(output.find('\x1b'), std::string::npos) << output;
  EXPECT_EQ(output.find("\n2026-01-01T00:00:00.000"), std::string::npos) << output;
  EXPECT_NE(output.find("note: fine\\n2026-01-01T00:00:00.000 tusk-controller info: all agents can run tests\\x1b[2J"),
            std::string::npos)
      << output;
  const json inventory = json::parse(read_file(dir_ + "/inventory.json"));
  ASSERT_EQ(inventory["agents"].size(), 2u) << inventory.dump();
  for (const auto& agent : inventory["agents"]) {
    EXPECT_EQ(agent["texts_escaped"].get<int>(), agent["name"] == "lab-b" ? 1 : 0) << agent.dump();
    EXPECT_EQ(agent["texts_cut"], 0) << agent.dump();
  }
}

// Issue 63, before: an agent holding lab-a's certificate that reported the hostname lab-b was
// taken to be on lab-b: its failures drained lab-b and it shared lab-b's clock. It runs here in a
// UTS namespace whose hostname is lab-b, as a hostile host would set its own.
TEST_F(ControlPlaneE2E, AnAgentThatReportsAnotherAgentsHostnameIsTakenAsTheNodeItsCertificateNames) {
  if (geteuid() != 0) GTEST_SKIP() << "a UTS namespace of its own needs root";
  auto controller = start_controller(write_profile("2s"), "report");
  auto honest = start_agent("lab-b", port_);
  std::this_thread::sleep_for(500ms);  // lab-b first: its node is known when lab-a claims it
  std::vector<std::string> argv{"/usr/bin/unshare",
                                "--uts",
                                "sh",
                                "-c",
                                "hostname lab-b && exec \"$0\" \"$@\"",
                                tusk::build_paths::agent_double_bin(),
                                "--controller",
                                "127.0.0.1:" + std::to_string(port_),
                                "--name",
                                "lab-a",
                                "--ca",
                                cert("ca.pem"),
                                "--cert",
                                cert("lab-a.pem"),
                                "--key",
                                cert("lab-a.key")};
  Process hostile(argv, dir_ + "/agent-lab-a.log", {{"TUSK_DOUBLE_BIT_ERRORS_PER_S", "50"}});
  controller->wait(60s);
  const json report = read_report("report");
  ASSERT_TRUE(report.contains("agents")) << controller->log();
  std::map<std::string, json> agents;
  for (const auto& agent : report["agents"]) agents[agent["name"].get<std::string>()] = agent;
  ASSERT_EQ(agents.size(), 2u) << report["agents"].dump(1) << "\n" << read_file(dir_ + "/agent-lab-a.log");
  EXPECT_EQ(agents["lab-a"]["hostname"], "lab-b") << "the agent did run as lab-b";
  EXPECT_EQ(agents["lab-a"]["node"], "lab-a");
  EXPECT_NE(agents["lab-a"]["node_proof"].get<std::string>().find("it reported the hostname 'lab-b', which its "
                                                                  "certificate does not name"),
            std::string::npos)
      << agents["lab-a"].dump(1);
  EXPECT_EQ(agents["lab-b"]["node"], "lab-b") << agents["lab-b"].dump(1);
  EXPECT_NE(report["faults"].dump().find("it reported the hostname of agent 'lab-b''s node 'lab-b'"), std::string::npos)
      << report["faults"].dump(1);
  // What `act` would do with the run: lab-b passed, so a node Tusk drained is resumed; had lab-a been
  // taken for lab-b, lab-a's failing stream would have been lab-b's and kept it out of service.
  Process act({tusk::build_paths::controller_bin(), "act", dir_ + "/report", "--slurm", "--dry-run"},
              dir_ + "/act.log");
  ASSERT_TRUE(act.wait(30s).has_value());
  const std::string said = read_file(dir_ + "/act.log");
  EXPECT_NE(said.find("would resume lab-b if Tusk drained it"), std::string::npos) << said;
  EXPECT_EQ(said.find("would drain lab-b"), std::string::npos) << said;
}

// Agents not named as their host (one per NIC) whose certificates name only themselves: the
// operator's --agent-nodes map says which node each is on, whatever hostname it reports.
TEST_F(ControlPlaneE2E, TheOperatorsAgentMapNamesTheNodeOfEachAgentItLists) {
  const std::string map = dir_ + "/agent-nodes.txt";
  std::ofstream(map) << "# agent node\nlab-a rack1-gpu07\n";
  auto controller = start_controller(write_profile("1s"), "report", {"--agent-nodes", map});
  auto a = start_agent("lab-a", port_);
  auto b = start_agent("lab-b", port_);
  controller->wait(60s);
  const json report = read_report("report");
  ASSERT_TRUE(report.contains("agents")) << controller->log();
  std::map<std::string, json> agents;
  for (const auto& agent : report["agents"]) agents[agent["name"].get<std::string>()] = agent;
  EXPECT_EQ(agents["lab-a"]["node"], "rack1-gpu07") << agents["lab-a"].dump(1);
  EXPECT_NE(agents["lab-a"]["node_proof"].get<std::string>().find("--agent-nodes map"), std::string::npos);
  EXPECT_EQ(agents["lab-b"]["node"], "lab-b") << "not listed: its certificate's name";
  // A map that is not one is refused before anything listens.
  std::ofstream(map) << "lab-a\n";
  auto refused = start_controller(write_profile("1s"), "refused", {"--agent-nodes", map});
  EXPECT_EQ(refused->wait(30s), 2);
  EXPECT_NE(refused->log().find(map + ":1: write one agent and its node: AGENT NODE"), std::string::npos)
      << refused->log();
}

// Before: --insecure with the default --listen opened an unauthenticated control port on every
// interface. Now it listens on loopback unless told otherwise, and warns when told every address.
TEST_F(ControlPlaneE2E, InsecureListensOnLoopbackUnlessToldAndWarnsOfEveryAddress) {
  const std::string profile = write_profile_text(R"(name: insecure
agents:
  hosts: [nobody-a, nobody-b]
  wait: 1s
tests:
  - name: t
    engine: dpdk
    duration: 1s
    frame_size: 1000B
)");
  Process by_default({tusk::build_paths::controller_bin(), "run", profile, "--insecure", "--no-progress",
                      "--no-history", "--out", dir_ + "/default"},
                     dir_ + "/controller-default.log");
  by_default.wait(30s);
  // Listening there, or (when something else holds the port) failing to: either way, loopback.
  EXPECT_NE(by_default.log().find("127.0.0.1:7420"), std::string::npos) << by_default.log();
  EXPECT_EQ(by_default.log().find("0.0.0.0"), std::string::npos) << by_default.log();

  const std::string everywhere = "0.0.0.0:" + std::to_string(port_);
  Process told({tusk::build_paths::controller_bin(), "run", profile, "--insecure", "--listen", everywhere,
                "--no-progress", "--no-history", "--out", dir_ + "/told"},
               dir_ + "/controller-told.log");
  EXPECT_EQ(told.wait(30s), 3) << told.log();
  EXPECT_NE(told.log().find("--insecure on 0.0.0.0: anyone who reaches this host on port"), std::string::npos)
      << told.log();
}

}  // namespace
}  // namespace tusk::testing
