// The DPDK engine across the fabric lab's routed leaf-spine network (tests/lab/fabric-lab.sh):
// tusk-controller runs a profile over mutual TLS on 127.0.0.1; real tusk-agent processes, one per
// lab host, send and check IPv4/UDP PRBS frames through their leaves and both spines, each peer's
// traffic spread over flows that ECMP hashes onto the spines by UDP source port. Which spine a
// flow took is asked of the leaf's own kernel (fabric-lab.sh path), never of Tusk. Needs root;
// skips otherwise.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "tests/e2e/process.hpp"
#include "tests/support/fabric_lab.hpp"

namespace tusk::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

struct LabHost {
  std::string name;     // the lab's host name, also the agent's: l1h1
  std::string address;  // 192.168.101.11
  int leaf = 0;
};

class FabricRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to make the lab's namespaces";
    dir_ = make_scratch_dir("tusk-fabric-run");
    id_ = "fr" + std::to_string(getpid() % 10000);
    port_ = free_port();
  }
  void TearDown() override {
    agents_.clear();
    lab_.reset();
    if (dir_.empty()) return;
    if (HasFailure()) {
      std::cerr << "logs and reports kept in " << dir_ << "\n";
    } else {
      fs::remove_all(dir_);
    }
  }

  void make_lab(int hosts_per_leaf) {
    lab_ = std::make_unique<FabricLab>(id_, "--spines 2 --leaves 2 --hosts " + std::to_string(hosts_per_leaf));
    for (int leaf = 1; leaf <= 2; ++leaf) {
      for (int host = 1; host <= hosts_per_leaf; ++host) {
        hosts_.push_back({"l" + std::to_string(leaf) + "h" + std::to_string(host),
                          "192.168." + std::to_string(100 + leaf) + "." + std::to_string(10 + host), leaf});
      }
    }
    std::vector<std::string> names;
    for (const auto& host : hosts_) names.push_back(host.name);
    ASSERT_TRUE(make_certs(dir_ + "/certs", names)) << "make-certs.sh failed";
  }

  // One agent per lab host on its port, with the host's address and its leaf as gateway. DPDK
  // 22.11's af_packet PMD may draw a PACKET_FANOUT group another agent has (see dpdk_run_test):
  // an agent whose port would not open is started again under a new pid.
  // `gateways`: a host's gateway where it is not its leaf's (.1).
  void start_agents(const std::map<std::string, std::string>& gateways = {}) {
    for (const auto& host : hosts_) {
      const std::string log = dir_ + "/agent-" + host.name + ".log";
      const auto given = gateways.find(host.name);
      const std::string gateway =
          given != gateways.end() ? given->second : "192.168." + std::to_string(100 + host.leaf) + ".1";
      for (int attempt = 1;; ++attempt) {
        auto agent = std::make_unique<Process>(
            std::vector<std::string>{TUSK_AGENT_BIN, "--controller", "127.0.0.1:" + std::to_string(port_), "--name",
                                     host.name, "--ca", dir_ + "/certs/ca.pem", "--cert",
                                     dir_ + "/certs/" + host.name + ".pem", "--key", dir_ + "/certs/" + host.name + ".key",
                                     "--dpdk-vdev", "net_af_packet0,iface=" + lab_->ns(host.name), "--dpdk-file-prefix",
                                     id_ + host.name, "--idle-sleep-us", "50", "--dpdk-address",
                                     host.address + "/24,gw=" + gateway},
            log);
        ASSERT_TRUE(wait_for_text(log, "tusk-agent info: agent '" + host.name + "'", 20s)) << read_file(log);
        if (read_file(log).find("engines: dpdk") != std::string::npos) {
          agents_.push_back(std::move(agent));
          break;
        }
        ASSERT_LT(attempt, 5) << "DPDK port would not open: " << read_file(log);
        fs::remove(log);
      }
    }
  }

  int run(const std::string& profile) {
    std::ofstream(dir_ + "/profile.yaml") << profile;
    Process controller({TUSK_CONTROLLER_BIN, "run", dir_ + "/profile.yaml", "--listen", "127.0.0.1:" + std::to_string(port_),
                        "--ca", dir_ + "/certs/ca.pem", "--cert", dir_ + "/certs/controller.pem", "--key",
                        dir_ + "/certs/controller.key", "--out", dir_ + "/report", "--no-progress"},
                       dir_ + "/controller.log");
    return controller.wait(120s).value_or(-100);
  }

  json report() const {
    std::ifstream file(dir_ + "/report/report.json");
    return file.good() ? json::parse(file) : json();
  }

  // The report's receiving streams, each a flow with its 5-tuple.
  std::vector<json> received_flows(const json& report) const {
    std::vector<json> flows;
    for (const auto& stream : report["tests"][0]["streams"]) {
      if (stream["stream_id"].get<std::string>().rfind("rx:", 0) == 0) flows.push_back(stream);
    }
    return flows;
  }

  // The uplink the flow's first leaf hashes it onto, as that leaf's kernel says.
  std::string path_of(const json& flow) const {
    std::string link = lab_->run(fmt_path(flow["flow"]));
    link.erase(link.find_last_not_of(" \n") + 1);
    return link;
  }
  static std::string fmt_path(const json& flow) {
    return "path " + flow["src_address"].get<std::string>() + " " + flow["dst_address"].get<std::string>() + " " +
           std::to_string(flow["src_port"].get<int>()) + " " + std::to_string(flow["dst_port"].get<int>());
  }

  std::string dir_, id_;
  int port_ = 0;
  std::unique_ptr<FabricLab> lab_;
  std::vector<LabHost> hosts_;
  std::vector<std::unique_ptr<Process>> agents_;
};

// Acceptance 1: four hosts on two leaves, every pair, PRBS-31 over IPv4/UDP for 10 s: no error,
// no loss, every flow judged with its 5-tuple, and both spines carried test traffic.
TEST_F(FabricRun, EveryPairAcrossTheSpinesIsCleanAndBothSpinesCarryFlows) {
  make_lab(2);
  start_agents();
  std::map<std::string, std::uint64_t> before;
  for (const char* link : {"l1-s1", "l1-s2", "l2-s1", "l2-s2"}) before[link] = lab_->counter(link, "up");
  ASSERT_EQ(run(R"(name: fabric-clean
agents:
  hosts: [l1h1, l1h2, l2h1, l2h2]
  wait: 30s
tests:
  - name: mesh
    engine: dpdk
    duration: 10s
    topology: mesh
    rate: 3kpps
    frame_size: 512B
    pattern: prbs31
    encapsulation: ipv4_udp
    dscp: 26
    ecmp_paths: 2
    coverage: 99%
    thresholds:
      max_ber: 1e-12
      max_lost_frames: 0
)"),
            0)
      << read_file(dir_ + "/controller.log");
  const json result = report();
  const auto flows = received_flows(result);
  // 4 receivers x 3 senders x 8 flows (2 paths at 99 % coverage).
  ASSERT_EQ(flows.size(), 96u) << result["tests"][0]["streams"].dump(1).substr(0, 4000);
  std::map<std::string, int> flows_by_uplink;
  std::set<std::uint32_t> source_ports;
  for (const auto& flow : flows) {
    EXPECT_TRUE(flow["passed"].get<bool>()) << flow.dump(1);
    EXPECT_GE(flow["counters"]["rx_frames"].get<std::uint64_t>(), 900u) << flow["stream_id"];
    EXPECT_EQ(flow["counters"]["bit_errors"], 0);
    EXPECT_EQ(flow["counters"]["lost_frames"], 0);
    EXPECT_EQ(flow["flow"]["protocol"], "udp");
    EXPECT_EQ(flow["flow"]["dst_port"], 0x88B5);
    source_ports.insert(flow["flow"]["src_port"].get<std::uint32_t>());
    // The receiver's name for the flow's sender comes from the source address, not the leaf's MAC.
    EXPECT_EQ(flow["flow"]["src_address"].get<std::string>().substr(0, 10), "192.168.10");
    if (flow["flow"]["src_address"].get<std::string>().substr(0, 11) != flow["flow"]["dst_address"].get<std::string>().substr(0, 11)) {
      ++flows_by_uplink[path_of(flow)];
    }
  }
  EXPECT_EQ(source_ports.size(), 8u);
  EXPECT_TRUE(result["tests"][0]["path_faults"].empty());
  // Both spines carried flows, as the leaves hashed them, and test frames on their links.
  EXPECT_GT(flows_by_uplink["l1-s1"] + flows_by_uplink["l2-s1"], 0);
  EXPECT_GT(flows_by_uplink["l1-s2"] + flows_by_uplink["l2-s2"], 0);
  for (const char* link : {"l1-s1", "l1-s2", "l2-s1", "l2-s2"}) {
    const std::uint64_t carried = lab_->counter(link, "up") - before[link];
    const int link_flows = flows_by_uplink[link];
    // Each cross-leaf flow sends ~1,250 frames in 10 s (3 kpps over 24 flows per agent).
    EXPECT_GE(carried, static_cast<std::uint64_t>(link_flows) * 1000) << link << " carried " << carried;
    EXPECT_LE(carried, static_cast<std::uint64_t>(link_flows) * 1400 + 200) << link << " carried " << carried;
  }
  // The summary shows each flow's 5-tuple.
  EXPECT_NE(read_file(dir_ + "/controller.log").find(" > 192.168.102.11:34997 udp"), std::string::npos);
}

// Acceptance 2: 2 % loss on one leaf-to-spine link in one direction: exactly the flows hashed
// through it lose frames, at that rate; their siblings between the same hosts through the other
// spine lose none; the report names the path fault; the run exits 1.
TEST_F(FabricRun, LossOnOneUplinkHitsExactlyTheFlowsThroughItAndTheReportNamesThePathFault) {
  make_lab(1);
  start_agents();
  lab_->run("impair l1-s1 up loss=2");
  ASSERT_EQ(run(R"(name: fabric-lossy-uplink
agents:
  hosts: [l1h1, l2h1]
  wait: 30s
tests:
  - name: pair
    engine: dpdk
    duration: 10s
    topology: pairs
    rate: 8kpps
    frame_size: 512B
    encapsulation: ipv4_udp
    flows_per_peer: 12
    thresholds:
      max_lost_frames: 0
)"),
            1)
      << read_file(dir_ + "/controller.log");
  const json result = report();
  const auto flows = received_flows(result);
  ASSERT_EQ(flows.size(), 24u);
  std::uint64_t hit_received = 0, hit_lost = 0;
  int hit = 0, spared = 0;
  std::set<std::string> failing;
  for (const auto& flow : flows) {
    const bool through_fault = flow["agent"] == "l2h1" && path_of(flow) == "l1-s1";
    const auto lost = flow["counters"]["lost_frames"].get<std::uint64_t>() + flow["counters"].value("tail_lost_frames", std::uint64_t{0});
    const auto received = flow["counters"]["rx_frames"].get<std::uint64_t>();
    EXPECT_EQ(flow["counters"]["bit_errors"], 0);
    if (through_fault) {
      ++hit;
      hit_lost += lost;
      hit_received += received;
      EXPECT_GT(lost, 0u) << flow.dump(1);
      EXPECT_FALSE(flow["passed"].get<bool>());
      failing.insert(flow["stream_id"].get<std::string>());
    } else {
      ++spared;
      EXPECT_EQ(lost, 0u) << "a flow that does not cross l1-s1 upward lost frames: " << flow.dump(1);
      EXPECT_TRUE(flow["passed"].get<bool>());
    }
  }
  ASSERT_GT(hit, 0) << "no flow of 12 hashed onto spine 1: the test proves nothing";
  ASSERT_GT(spared, 12) << "every flow of l1h1 hashed onto spine 1: no sibling to compare";
  const double loss = static_cast<double>(hit_lost) / static_cast<double>(hit_lost + hit_received);
  EXPECT_NEAR(loss, 0.02, 0.005) << hit_lost << " lost of " << hit_lost + hit_received;
  // The report says it: these flows fail while their siblings pass.
  const auto& faults = result["tests"][0]["path_faults"];
  ASSERT_EQ(faults.size(), 1u) << faults.dump(1);
  EXPECT_EQ(faults[0]["receiver"], "l2h1");
  EXPECT_EQ(faults[0]["sender"], "l1h1");
  EXPECT_EQ(faults[0]["failing_streams"].size(), static_cast<std::size_t>(hit));
  for (const auto& id : faults[0]["failing_streams"]) EXPECT_TRUE(failing.count(id.get<std::string>())) << id;
  const std::string summary = read_file(dir_ + "/controller.log");
  EXPECT_NE(summary.find("path fault: l2h1 from l1h1: " + std::to_string(hit) + " of 12 flows fail"), std::string::npos)
      << summary;
}

// Acceptance 4, in a run: an agent given a gateway that does not exist refuses the test with an
// error naming its port and the gateway it asked, and the run exits with a usage error.
TEST_F(FabricRun, AWrongGatewayStopsTheRunWithTheAddressItAskedNotSilentLoss) {
  make_lab(1);
  // The host on leaf 2 names .99 as its gateway: nobody answers ARP for it.
  start_agents({{"l2h1", "192.168.102.99"}});
  const int exit = run(R"(name: fabric-wrong-gateway
agents:
  hosts: [l1h1, l2h1]
  wait: 30s
tests:
  - name: pair
    engine: dpdk
    duration: 3s
    topology: pairs
    rate: 1kpps
    frame_size: 256B
    encapsulation: ipv4_udp
)");
  EXPECT_NE(exit, 0);
  const std::string log = read_file(dir_ + "/controller.log");
  EXPECT_NE(log.find("no ARP reply from 192.168.102.99"), std::string::npos) << log;
}

}  // namespace
}  // namespace tusk::testing
