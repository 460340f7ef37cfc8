// End to end on 127.0.0.1 with mutual TLS: a real tusk-controller process and real agent
// processes (tusk-agent-double: the shipped agent with a test-only engine double) run profiles,
// and the tests read the report.json and junit.xml they leave.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/e2e/cutting_proxy.hpp"
#include "tests/e2e/process.hpp"

namespace tusk::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr auto kProfileTemplate = R"(name: e2e-control-plane
agents:
  hosts: [lab-a, lab-b]
  wait: 20s
tests:
  - name: double-pairs
    engine: dpdk
    duration: {duration}
    topology: pairs
    rate: 1kpps
    frame_size: 1000B
    thresholds:
      max_ber: 1e-12
      min_throughput: 1Mbps
)";

class ControlPlaneE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_scratch_dir("tusk-e2e");
    ASSERT_TRUE(make_certs(dir_ + "/certs", {"lab-a", "lab-b"})) << "make-certs.sh failed";
    port_ = free_port();
  }

  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "logs and reports kept in " << dir_ << "\n";
    } else {
      fs::remove_all(dir_);
    }
  }

  std::string write_profile(const std::string& duration) {
    std::string text = kProfileTemplate;
    text.replace(text.find("{duration}"), 10, duration);
    const std::string path = dir_ + "/profile.yaml";
    std::ofstream(path) << text;
    return path;
  }

  std::unique_ptr<Process> start_controller(const std::string& profile, const std::string& out,
                                            std::vector<std::string> extra = {}) {
    std::vector<std::string> argv{TUSK_CONTROLLER_BIN, "run", profile, "--listen", "127.0.0.1:" + std::to_string(port_),
                                  "--ca", cert("ca.pem"), "--cert", cert("controller.pem"), "--key", cert("controller.key"),
                                  "--out", dir_ + "/" + out, "--no-progress"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return std::make_unique<Process>(argv, dir_ + "/controller-" + out + ".log");
  }

  // `cert_of` lets a test hand an agent someone else's certificate.
  std::unique_ptr<Process> start_agent(const std::string& name, int port, std::map<std::string, std::string> env = {},
                                       const std::string& cert_of = "") {
    const std::string owner = cert_of.empty() ? name : cert_of;
    std::vector<std::string> argv{TUSK_AGENT_DOUBLE_BIN, "--controller", "127.0.0.1:" + std::to_string(port), "--name", name,
                                  "--ca", cert("ca.pem"), "--cert", cert(owner + ".pem"), "--key", cert(owner + ".key")};
    return std::make_unique<Process>(argv, dir_ + "/agent-" + name + ".log", env);
  }

  json read_report(const std::string& out) {
    std::ifstream file(dir_ + "/" + out + "/report.json");
    EXPECT_TRUE(file.good()) << "no report.json in " << dir_ + "/" + out;
    return file.good() ? json::parse(file) : json();
  }

  std::string cert(const std::string& file) const { return dir_ + "/certs/" + file; }

  static const json& agent_entry(const json& test, const std::string& name) {
    for (const auto& agent : test["agents"]) {
      if (agent["agent"] == name) return agent;
    }
    static const json none;
    ADD_FAILURE() << "no entry for agent " << name;
    return none;
  }

  static std::vector<int> one_to(int n) {
    std::vector<int> indexes;
    for (int i = 1; i <= n; ++i) indexes.push_back(i);
    return indexes;
  }

  std::string dir_;
  int port_ = 0;
};

TEST_F(ControlPlaneE2E, TwoAgentsOverTlsRunAProfileAndTheReportHasEverySample) {
  auto controller = start_controller(write_profile("4s"), "report");
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);

  ASSERT_EQ(controller->wait(60s), 0) << controller->log();
  const json report = read_report("report");
  EXPECT_EQ(report["schema"], "tusk.report/1");
  EXPECT_EQ(report["exit_code"], 0);
  ASSERT_EQ(report["tests"].size(), 1u);
  const json& test = report["tests"][0];
  EXPECT_EQ(test["verdict"], "pass") << test.dump(2);
  EXPECT_TRUE(test["start_skew_ns"].is_number_integer());
  EXPECT_GE(test["start_skew_ns"].get<long long>(), 0);
  ASSERT_EQ(test["streams"].size(), 2u);
  for (const auto& stream : test["streams"]) {
    EXPECT_TRUE(stream["passed"].get<bool>());
    EXPECT_EQ(stream["series"].size(), 4u) << "one point per second of a 4 s test";
    EXPECT_GT(stream["counters"]["tx_frames"].get<double>(), 0);
    // Zero errors: the report claims BER <= -ln(1 - 0.95) / bits at the profile's 95 % (2.995732 / N).
    const double bits = stream["counters"]["bits_compared"].get<double>();
    EXPECT_EQ(stream["ber"]["bit_errors"], 0);
    EXPECT_NEAR(stream["ber"]["upper_bound"].get<double>(), 2.995732 / bits, 1e-6 * 2.995732 / bits);
  }
  for (const std::string name : {"lab-a", "lab-b"}) {
    // The rate the planner resolved once and sent: 1 kpps of 1000 B frames is 8 Mbit/s.
    const json& offered = test["offered"][name];
    EXPECT_DOUBLE_EQ(offered["pps"].get<double>(), 1000) << test["offered"].dump();
    EXPECT_DOUBLE_EQ(offered["bps"].get<double>(), 8e6);
    EXPECT_EQ(offered["largest_frame_bytes"], 1000);
    const json& agent = agent_entry(test, name);
    EXPECT_EQ(agent["sample_indexes"].get<std::vector<int>>(), one_to(4)) << name;
    EXPECT_EQ(agent["samples_made"], 4) << name;
    EXPECT_TRUE(agent["completed"].get<bool>()) << name;
  }
  const std::string junit = read_file(dir_ + "/report/junit.xml");
  EXPECT_NE(junit.find(R"(<testsuites name="e2e-control-plane" tests="2" failures="0" errors="0">)"), std::string::npos)
      << junit;
}

TEST_F(ControlPlaneE2E, CuttingAnAgentsConnectionMidRunLosesNoSample) {
  const int proxy_port = free_port();
  CuttingProxy proxy(proxy_port, port_);
  // A 5 s lease outlasts the 1 s cut plus the agent's reconnect backoff.
  auto controller = start_controller(write_profile("8s"), "report", {"--lease", "5s"});
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", proxy_port);

  ASSERT_TRUE(wait_for_text(agent_b->log_path(), "test 0 started", 30s)) << agent_b->log();
  std::this_thread::sleep_for(2500ms);
  proxy.cut();
  std::this_thread::sleep_for(1s);
  proxy.restore();

  ASSERT_EQ(controller->wait(60s), 0) << controller->log();
  EXPECT_GE(proxy.connections_cut(), 1);
  const json report = read_report("report");
  const json& test = report["tests"][0];
  EXPECT_EQ(test["verdict"], "pass") << test.dump(2);
  for (const std::string name : {"lab-a", "lab-b"}) {
    const json& agent = agent_entry(test, name);
    EXPECT_EQ(agent["sample_indexes"].get<std::vector<int>>(), one_to(8)) << name;
    EXPECT_EQ(agent["samples_made"], 8) << name;
  }
  bool reconnected = false;
  for (const auto& agent : report["agents"]) {
    if (agent["name"] == "lab-b") reconnected = agent["connections"].get<int>() >= 2;
  }
  EXPECT_TRUE(reconnected) << report["agents"].dump(2);
  bool fault_reported = false;
  for (const auto& fault : report["faults"]) {
    if (fault["agent"] == "lab-b" && fault["message"].get<std::string>().find("connection lost") != std::string::npos) {
      fault_reported = true;
    }
  }
  EXPECT_TRUE(fault_reported) << "the cut must be reported, not hidden: " << report["faults"].dump(2);
}

TEST_F(ControlPlaneE2E, ThresholdBreachExitsOneAndFailsTheJunitCases) {
  auto controller = start_controller(write_profile("2s"), "report");
  const std::map<std::string, std::string> errors{{"TUSK_DOUBLE_BIT_ERRORS_PER_S", "50"}};
  auto agent_a = start_agent("lab-a", port_, errors);
  auto agent_b = start_agent("lab-b", port_, errors);

  ASSERT_EQ(controller->wait(60s), 1) << controller->log();
  const json report = read_report("report");
  EXPECT_EQ(report["tests"][0]["verdict"], "fail");
  const std::string junit = read_file(dir_ + "/report/junit.xml");
  EXPECT_NE(junit.find(R"(tests="2" failures="2" errors="0")"), std::string::npos) << junit;
  EXPECT_NE(junit.find("type=\"max_ber\""), std::string::npos) << junit;
}

TEST_F(ControlPlaneE2E, MissingAgentExitsThreeAndNamesIt) {
  auto controller = start_controller(write_profile("2s"), "report", {"--wait", "2s"});
  auto agent_a = start_agent("lab-a", port_);

  ASSERT_EQ(controller->wait(30s), 3) << controller->log();
  const json report = read_report("report");
  EXPECT_EQ(report["missing_agents"], json::array({"lab-b"}));
  EXPECT_NE(read_file(dir_ + "/report/junit.xml").find("errors=\"1\""), std::string::npos);
}

TEST_F(ControlPlaneE2E, AgentWhoseCertificateNamesSomeoneElseIsRefused) {
  auto controller = start_controller(write_profile("2s"), "report", {"--wait", "3s"});
  auto agent_a = start_agent("lab-a", port_);
  auto impostor = start_agent("lab-b", port_, {}, "lab-a");

  ASSERT_EQ(controller->wait(30s), 3) << controller->log();
  EXPECT_NE(controller->log().find("agent calls itself 'lab-b' but its certificate names 'lab-a'"), std::string::npos)
      << controller->log();
}

TEST_F(ControlPlaneE2E, AgentStopsTrafficWhenItsControllerDiesAndTellsTheNextOne) {
  auto first = start_controller(write_profile("60s"), "first", {"--lease", "1s"});
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);
  ASSERT_TRUE(wait_for_text(agent_a->log_path(), "test 0 started", 30s)) << agent_a->log();
  first->signal(SIGKILL);
  ASSERT_TRUE(first->wait(5s).has_value());

  EXPECT_TRUE(wait_for_text(agent_a->log_path(), "traffic stopped", 10s)) << agent_a->log();
  EXPECT_TRUE(wait_for_text(agent_b->log_path(), "traffic stopped", 10s)) << agent_b->log();

  // The next controller hears why the traffic stopped, as soon as the agents reconnect.
  auto second = start_controller(write_profile("1s"), "second");
  ASSERT_EQ(second->wait(60s), 0) << second->log();
  const json report = read_report("second");
  std::size_t lease_faults = 0;
  for (const auto& fault : report["faults"]) {
    if (fault["message"].get<std::string>().find("LEASE_EXPIRED") != std::string::npos) ++lease_faults;
  }
  EXPECT_EQ(lease_faults, 2u) << report["faults"].dump(2);
}

TEST_F(ControlPlaneE2E, PlanRefusedByAnAgentIsAConfigErrorAndNothingStarts) {
  std::string profile = write_profile("2s");
  std::string text = read_file(profile);
  text.insert(text.find("    rate:"), "    port: missing-port\n");
  std::ofstream(profile) << text;
  auto controller = start_controller(profile, "report");
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);

  ASSERT_EQ(controller->wait(60s), 2) << controller->log();
  EXPECT_NE(controller->log().find("port 'missing-port' does not exist"), std::string::npos) << controller->log();
  EXPECT_EQ(agent_a->log().find("test 0 started"), std::string::npos);
}

}  // namespace
}  // namespace tusk::testing
