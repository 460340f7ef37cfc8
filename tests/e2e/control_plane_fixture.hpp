// TEST ONLY. What the control-plane end-to-end tests share: a scratch directory with
// certificates, a real tusk-controller and real agent processes (tusk-agent-double), and their
// reports.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/e2e/process.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/series_rows.hpp"

namespace tusk::testing {

using nlohmann::json;
namespace fs = std::filesystem;

inline constexpr auto kProfileTemplate = R"(name: e2e-control-plane
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
    return write_profile_text(text);
  }

  std::string write_profile_text(const std::string& text) {
    const std::string path = dir_ + "/profile.yaml";
    std::ofstream(path) << text;
    return path;
  }

  std::unique_ptr<Process> start_controller(const std::string& profile, const std::string& out,
                                            std::vector<std::string> extra = {},
                                            std::map<std::string, std::string> env = {}) {
    std::vector<std::string> argv{tusk::build_paths::controller_bin(),
                                  "run",
                                  profile,
                                  "--listen",
                                  "127.0.0.1:" + std::to_string(port_),
                                  "--ca",
                                  cert("ca.pem"),
                                  "--cert",
                                  cert("controller.pem"),
                                  "--key",
                                  cert("controller.key"),
                                  "--out",
                                  dir_ + "/" + out,
                                  "--no-progress",
                                  "--no-history"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::string log_name = out;
    std::replace(log_name.begin(), log_name.end(), '/', '-');
    return std::make_unique<Process>(argv, dir_ + "/controller-" + log_name + ".log", env);
  }

  // `cert_of` lets a test hand an agent someone else's certificate.
  std::unique_ptr<Process> start_agent(const std::string& name, int port, std::map<std::string, std::string> env = {},
                                       const std::string& cert_of = "", std::vector<std::string> extra = {}) {
    const std::string owner = cert_of.empty() ? name : cert_of;
    std::vector<std::string> argv{tusk::build_paths::agent_double_bin(),
                                  "--controller",
                                  "127.0.0.1:" + std::to_string(port),
                                  "--name",
                                  name,
                                  "--ca",
                                  cert("ca.pem"),
                                  "--cert",
                                  cert(owner + ".pem"),
                                  "--key",
                                  cert(owner + ".key")};
    argv.insert(argv.end(), extra.begin(), extra.end());
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

  // An agent's "sample_ranges" when samples 1..n all arrived.
  static json one_to(int n) { return json::array({json::array({1, n})}); }

  // The rows of a run's series file (tests/support/series_rows.hpp).
  std::vector<json> series_rows(const std::string& out_subdir, const std::vector<std::string>& filter = {}) {
    return testing::series_rows(dir_ + "/" + out_subdir, dir_ + "/series-" + std::to_string(++series_reads_) + ".log",
                                filter);
  }

  std::string dir_;
  int series_reads_ = 0;
  int port_ = 0;
};

}  // namespace tusk::testing
