// tusk-agent started from its configuration file alone (`--config`, no other flag): it reads its
// controller, name, certificates and limits there, and registers with a real controller over mutual
// TLS. A bad file is refused before anything starts, with file:line:column, the key and why.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "tests/e2e/process.hpp"
#include "tests/support/build_paths.hpp"

namespace tusk::testing {
namespace {

// Whether this machine has an RDMA device, so that an agent naming no DPDK port has an engine.
bool host_has_rdma_device() {
  std::error_code error;
  const std::filesystem::directory_iterator devices("/sys/class/infiniband", error);
  return !error && devices != std::filesystem::directory_iterator();
}

using namespace std::chrono_literals;

void write_file(const std::string& path, const std::string& text) {
  std::ofstream file(path);
  file << text;
  ASSERT_TRUE(file.good()) << path;
}

TEST(AgentConfigE2E, AnAgentStartedFromItsConfigFileAloneRegistersUnderTheNameAndCertificateItNames) {
  const std::string dir = make_scratch_dir("tusk-agent-config");
  ASSERT_TRUE(make_certs(dir, {"rack7-host3"}));
  const int port = free_port();
  const std::string config = dir + "/agent.yaml";
  write_file(config,
             "# as a host's /etc/tusk/agent.yaml\n"
             "controller: 127.0.0.1:" +
                 std::to_string(port) +
                 "\n"
                 "name: rack7-host3\n"
                 "tls:\n"
                 "  ca: " +
                 dir +
                 "/ca.pem\n"
                 "  cert: " +
                 dir +
                 "/rack7-host3.pem\n"
                 "  key: " +
                 dir +
                 "/rack7-host3.key\n"
                 "limits:\n"
                 "  max_rate: 10Gbps\n"
                 "  max_lease: 5s\n"
                 "log_level: warn\n");

  Process controller({tusk::build_paths::controller_bin(), "inventory", "--expect", "1", "--wait", "30s", "--listen",
                      "127.0.0.1:" + std::to_string(port), "--ca", dir + "/ca.pem", "--cert", dir + "/controller.pem",
                      "--key", dir + "/controller.key", "--json", dir + "/inventory.json"},
                     dir + "/controller.log");
  Process agent({tusk::build_paths::agent_bin(), "--config", config}, dir + "/agent.log");

  // It registered, yet this host has no DPDK port and no RDMA device: it can run nothing, and
  // inventory --expect 1 says so and fails (before, it exited 0).
  ASSERT_EQ(controller.wait(40s), 3) << controller.log() << agent.log();
  EXPECT_NE(controller.log().find("1 agent(s) can run nothing, no engine (their notes say why): rack7-host3"),
            std::string::npos)
      << controller.log();
  EXPECT_NE(controller.log().find("0 of the 1 expected agent(s) can run tests"), std::string::npos) << controller.log();
  const auto inventory = nlohmann::json::parse(read_file(dir + "/inventory.json"));
  ASSERT_EQ(inventory["agents"].size(), 1u) << inventory.dump(2);
  EXPECT_EQ(inventory["agents"][0]["name"], "rack7-host3");
  EXPECT_EQ(inventory["agents"][0]["version"], TUSK_VERSION);
  // The whole inventory too, as `plan --inventory` reads it back.
  EXPECT_EQ(inventory["agents"][0]["inventory"]["agent_version"], TUSK_VERSION) << inventory.dump(2);
  // log_level: warn from the file took effect: no info lines (such as "registered with controller").
  EXPECT_NE(agent.log().find("tusk-agent warning: "), std::string::npos) << agent.log();
  EXPECT_EQ(agent.log().find("tusk-agent info: "), std::string::npos) << agent.log();
  agent.signal(SIGTERM);
  EXPECT_EQ(agent.wait(10s), 0) << agent.log();
}

struct BadConfig {
  std::string text;
  std::string expected;  // after "<file>:"
};

TEST(AgentConfigE2E, ABadConfigFileIsRefusedWithItsPositionKeyAndReasonAndNothingStarts) {
  const std::string dir = make_scratch_dir("tusk-agent-bad-config");
  const std::vector<BadConfig> cases = {
      {"controller: 127.0.0.1:7420\ntls:\n  insecure: true\n  cret: agent.pem\n",
       "4:3: tls.cret: unknown key (did you mean 'cert'?)"},
      {"controller: 127.0.0.1:7420\nlimits:\n  max_lease: 10ms\n", "3:14: limits.max_lease: must be at least 300ms"},
      {"dpdk:\n  lcores: [0, 1]\n", "2:11: dpdk.lcores: expected a single value, got a list"},
      {"outbox: 12\n", "1:9: outbox: Value 12 not in range 1000 to 100000000"},
      {"name: a\nname: b\n", "2:1: name: duplicate key (first set at line 1)"},
      {"controller: [\n", "2:1: "},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string config = dir + "/bad" + std::to_string(i) + ".yaml";
    write_file(config, cases[i].text);
    Process agent({tusk::build_paths::agent_bin(), "--config", config}, dir + "/bad" + std::to_string(i) + ".log");
    EXPECT_EQ(agent.wait(10s), 2) << config << "\n" << agent.log();
    EXPECT_NE(agent.log().find(config + ":" + cases[i].expected), std::string::npos)
        << "expected '" << config << ":" << cases[i].expected << "' in:\n"
        << agent.log();
    // Refused before it started: it never logged a connection attempt.
    EXPECT_EQ(agent.log().find("connect"), std::string::npos) << agent.log();
  }
}

TEST(AgentConfigE2E, CheckConfigSaysWhichCertificateCannotBeLoaded) {
  const std::string dir = make_scratch_dir("tusk-agent-check-config");
  const std::string config = dir + "/agent.yaml";
  write_file(config, "tls:\n  ca: " + dir + "/missing-ca.pem\n  cert: " + dir + "/a.pem\n  key: " + dir + "/a.key\n");
  Process agent({tusk::build_paths::agent_bin(), "--config", config, "--check-config"}, dir + "/check.log");
  EXPECT_EQ(agent.wait(10s), 2) << agent.log();
  EXPECT_NE(agent.log().find("missing-ca.pem"), std::string::npos) << agent.log();
}

// Issue 57, before: the example named a DPDK port that an RDMA rack had to know to delete, and
// capped the rate at 100 Gbit/s under the starter profile's 400. It names no device now (RDMA takes
// every device of the host) and caps at a 400G NIC's line rate.
TEST(AgentConfigE2E, TheShippedExampleConfigurationIsValidAsItIs) {
  const std::string dir = make_scratch_dir("tusk-agent-example-config");
  // --insecure on the command line wins over the example's certificate paths, which exist only on a host.
  const std::string example = tusk::build_paths::source_dir() + "/deploy/config/agent.yaml";
  Process agent({tusk::build_paths::agent_bin(), "--config", example, "--check-config", "--insecure"},
                dir + "/check.log");
  // Valid as it is; where the host has no RDMA device (this lab machine) it says it can run nothing.
  if (host_has_rdma_device()) {
    EXPECT_EQ(agent.wait(10s), 0) << agent.log();
    EXPECT_NE(agent.log().find("agent.yaml: ok"), std::string::npos) << agent.log();
  } else {
    EXPECT_EQ(agent.wait(10s), 1) << agent.log();
    EXPECT_NE(agent.log().find("agent.yaml: valid, but this host can run no test"), std::string::npos) << agent.log();
  }
  const std::string text = read_file(example);
  EXPECT_NE(text.find("\n  max_rate: 400Gbps"), std::string::npos) << "the starter profile's rate";
  EXPECT_EQ(text.find("\ndpdk:"), std::string::npos) << "no DPDK port an RDMA rack must delete";
  // A DPDK port named on the command line is checked against this host.
  Process with_port({tusk::build_paths::agent_bin(), "--config", example, "--check-config", "--insecure", "--dpdk-pci",
                     "0000:3b:00.0"},
                    dir + "/check-pci.log");
  EXPECT_EQ(with_port.wait(10s), 2) << with_port.log();
  EXPECT_EQ(with_port.log(),
            "tusk-agent: --dpdk-pci 0000:3b:00.0: this host has no PCI device 0000:3b:00.0 (lspci -D lists "
            "them)\n");
}

// Issue 57, before: an agent that could run nothing (no DPDK port named, no RDMA device on the
// host) passed --check-config with exit 0.
TEST(AgentConfigE2E, CheckConfigSaysWhenTheAgentCouldRunNoTest) {
  if (host_has_rdma_device()) GTEST_SKIP() << "this host has an RDMA device: every agent here has an engine";
  const std::string dir = make_scratch_dir("tusk-agent-no-engine");
  Process idle({tusk::build_paths::agent_bin(), "--check-config", "--insecure", "--controller", "127.0.0.1:7420"},
               dir + "/idle.log");
  EXPECT_EQ(idle.wait(10s), 1) << idle.log();
  EXPECT_NE(idle.log().find("this agent can run no test here: it names no DPDK port"), std::string::npos) << idle.log();
  EXPECT_EQ(idle.log().find(": ok"), std::string::npos) << idle.log();
}

// Before: --check-config said ok for a name its certificate's CN does not match (the controller
// always refuses that), a controller address without a port (the agent then refused to start),
// and a PCI device, RDMA device or interface that does not exist.
TEST(AgentConfigE2E, CheckConfigChecksTheNameAgainstTheCertificateTheAddressAndTheHostsDevices) {
  const std::string dir = make_scratch_dir("tusk-agent-check-host");
  ASSERT_TRUE(make_certs(dir, {"rack7-host3"}));
  Process agent(
      {tusk::build_paths::agent_bin(), "--check-config", "--controller", "controller.example.net", "--name",
       "rack7-host4", "--ca", dir + "/ca.pem", "--cert", dir + "/rack7-host3.pem", "--key", dir + "/rack7-host3.key",
       "--dpdk-pci", "0000:ff:1f.7", "--dpdk-vdev", "net_af_packet0,iface=nosuch9", "--rdma-device", "nosuch_0"},
      dir + "/check.log");
  EXPECT_EQ(agent.wait(10s), 2) << agent.log();
  const std::string log = agent.log();
  for (const std::string& expected : std::vector<std::string>{
           "--controller: 'controller.example.net' is not host:port (e.g. 127.0.0.1:7420)",
           "--name 'rack7-host4' is not the CN of its certificate '" + dir +
               "/rack7-host3.pem' (rack7-host3): the "
               "controller refuses that agent; use --name rack7-host3 or a certificate made for rack7-host4",
           "--dpdk-vdev net_af_packet0,iface=nosuch9: this host has no network interface 'nosuch9'",
           "--dpdk-pci 0000:ff:1f.7: this host has no PCI device 0000:ff:1f.7",
           "--rdma-device nosuch_0: this host has no RDMA "
           "device 'nosuch_0'"}) {
    EXPECT_NE(log.find(expected), std::string::npos) << expected << "\n" << log;
  }
  EXPECT_EQ(log.find(": ok"), std::string::npos) << log;

  Process good({tusk::build_paths::agent_bin(), "--check-config", "--controller", "127.0.0.1:7420", "--name",
                "rack7-host3", "--ca", dir + "/ca.pem", "--cert", dir + "/rack7-host3.pem", "--key",
                dir + "/rack7-host3.key", "--dpdk-vdev", "net_af_packet0,iface=lo"},
               dir + "/good.log");
  EXPECT_EQ(good.wait(10s), 0) << good.log();
}

}  // namespace
}  // namespace tusk::testing
