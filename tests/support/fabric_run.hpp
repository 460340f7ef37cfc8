// The fabric lab with a run on it (tests/lab/fabric-lab.sh): a fixture that makes the lab,
// certificates and one tusk-agent per lab host (DPDK over af_packet on the host's port, with its
// address and gateway), then runs tusk-controller on 127.0.0.1 and reads its report. Needs root;
// skips otherwise.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/e2e/process.hpp"
#include "tests/support/af_packet_agents.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/fabric_lab.hpp"

namespace tusk::testing {

using namespace std::chrono_literals;

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
      std::filesystem::remove_all(dir_);
    }
  }

  void make_lab(int hosts_per_leaf, int leaves = 2) {
    lab_ = std::make_unique<FabricLab>(
        id_, "--spines 2 --leaves " + std::to_string(leaves) + " --hosts " + std::to_string(hosts_per_leaf));
    for (int leaf = 1; leaf <= leaves; ++leaf) {
      for (int host = 1; host <= hosts_per_leaf; ++host) {
        hosts_.push_back({"l" + std::to_string(leaf) + "h" + std::to_string(host),
                          "192.168." + std::to_string(100 + leaf) + "." + std::to_string(10 + host), leaf});
      }
    }
    std::vector<std::string> names;
    for (const auto& host : hosts_) names.push_back(host.name);
    ASSERT_TRUE(copy_of_certs(dir_ + "/certs", names)) << "make-certs.sh failed";
  }

  // One agent per lab host on its port, with the host's address and its leaf as gateway, all
  // spawned at once and none waited for: the controller that run() starts next waits for them to
  // register (one after another, six agents took 2 s before the controller could start, and the
  // first had backed off its redials by then). An agent whose port would not open registers
  // without DPDK, and the run then stops naming it.
  // `gateways`: a host's gateway where it is not its leaf's (.1).
  // `idle_sleep_us`: a host's poll pause where it is not the lab's 50 us (a slow receiver).
  // `host_lldpd` false: the agents ask no lldpd (a socket nobody serves), so their ports' LLDP
  // neighbours come from the frames their DPDK ports receive.
  void start_agents(const std::map<std::string, std::string>& gateways = {},
                    const std::map<std::string, int>& idle_sleep_us = {}, bool host_lldpd = true) {
    std::string lldp_socket = host_lldpd ? lab_->run("host-lldp-socket") : dir_ + "/no-lldpd.sock";
    lldp_socket.erase(lldp_socket.find_last_not_of(" \n") + 1);
    std::vector<AfPacketAgents::Agent> agents;
    for (const auto& host : hosts_) {
      agents.push_back({agent_command(host, gateways, idle_sleep_us, lldp_socket), lab_->ns(host.name),
                        dir_ + "/agent-" + host.name + ".log"});
    }
    for (auto& agent : af_packet_agents_.start(agents)) agents_.push_back(std::move(agent));
  }

  // The command line of `host`'s agent (start_agents' arguments).
  std::vector<std::string> agent_command(const LabHost& host, const std::map<std::string, std::string>& gateways,
                                         const std::map<std::string, int>& idle_sleep_us,
                                         const std::string& lldp_socket) const {
    const auto given = gateways.find(host.name);
    const std::string gateway =
        given != gateways.end() ? given->second : "192.168." + std::to_string(100 + host.leaf) + ".1";
    const auto sleep = idle_sleep_us.find(host.name);
    const std::string idle = std::to_string(sleep != idle_sleep_us.end() ? sleep->second : 50);
    return {tusk::build_paths::agent_bin(),
            "--controller",
            "127.0.0.1:" + std::to_string(port_),
            "--name",
            host.name,
            "--ca",
            dir_ + "/certs/ca.pem",
            "--cert",
            dir_ + "/certs/" + host.name + ".pem",
            "--key",
            dir_ + "/certs/" + host.name + ".key",
            "--dpdk-vdev",
            "net_af_packet0,iface=" + lab_->ns(host.name),
            "--dpdk-file-prefix",
            id_ + host.name,
            "--idle-sleep-us",
            idle,
            "--dpdk-address",
            host.address + "/24,gw=" + gateway,
            "--lldpcli-socket",
            lldp_socket};
  }

  // The controller's command line for `profile` (written to the scratch directory), plus `extra`.
  std::vector<std::string> controller_command(const std::string& profile, const std::vector<std::string>& extra = {}) {
    std::ofstream(dir_ + "/profile.yaml") << profile;
    // A report is never written over: each run gets the directory afresh, the test reads the latest.
    std::filesystem::remove_all(dir_ + "/report");
    std::vector<std::string> command{tusk::build_paths::controller_bin(),
                                     "run",
                                     dir_ + "/profile.yaml",
                                     "--listen",
                                     "127.0.0.1:" + std::to_string(port_),
                                     "--ca",
                                     dir_ + "/certs/ca.pem",
                                     "--cert",
                                     dir_ + "/certs/controller.pem",
                                     "--key",
                                     dir_ + "/certs/controller.key",
                                     "--out",
                                     dir_ + "/report",
                                     "--no-progress",
                                     "--no-history"};
    command.insert(command.end(), extra.begin(), extra.end());
    return command;
  }

  int run(const std::string& profile, const std::vector<std::string>& extra = {},
          std::chrono::seconds timeout = std::chrono::seconds(120)) {
    Process controller(controller_command(profile, extra), dir_ + "/controller.log");
    return controller.wait(timeout).value_or(-100);
  }

  // The lab's topology file (fabric-lab.sh topology-file), for --topology; returns its path.
  std::string topology_file() {
    const std::string path = dir_ + "/topology.yaml";
    std::ofstream(path) << lab_->run("topology-file");
    return path;
  }

  nlohmann::json report() const {
    std::ifstream file(dir_ + "/report/report.json");
    return file.good() ? nlohmann::json::parse(file) : nlohmann::json();
  }

  // The report's receiving streams, each a flow with its 5-tuple.
  std::vector<nlohmann::json> received_flows(const nlohmann::json& report) const {
    std::vector<nlohmann::json> flows;
    for (const auto& stream : report["tests"][0]["streams"]) {
      if (stream["stream_id"].get<std::string>().rfind("rx:", 0) == 0) flows.push_back(stream);
    }
    return flows;
  }

  // The uplink the flow's first leaf hashes it onto, as that leaf's kernel says.
  std::string path_of(const nlohmann::json& flow) const {
    std::string link = lab_->run(fmt_path(flow["flow"]));
    link.erase(link.find_last_not_of(" \n") + 1);
    return link;
  }
  static std::string fmt_path(const nlohmann::json& flow) {
    return "path " + flow["src_address"].get<std::string>() + " " + flow["dst_address"].get<std::string>() + " " +
           std::to_string(flow["src_port"].get<int>()) + " " + std::to_string(flow["dst_port"].get<int>());
  }

  std::string dir_, id_;
  int port_ = 0;
  std::unique_ptr<FabricLab> lab_;
  std::vector<LabHost> hosts_;
  AfPacketAgents af_packet_agents_;
  std::vector<std::unique_ptr<Process>> agents_;
};

}  // namespace tusk::testing
