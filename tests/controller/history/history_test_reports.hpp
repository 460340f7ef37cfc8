// Report documents for the run-history tests, shaped as report_json writes them (a lab run's
// report.json): one pairs test with a sender, a receiver and a port stream each way, and a routed
// test with localisation. Tests change the numbers they need.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>

namespace tusk::testing {

// What `body` threw, or "no error".
inline std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

// A fresh directory under the system's temporary one, removed when the test ends.
class HistoryScratch {
 public:
  HistoryScratch() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("tusk-history-" + std::to_string(getpid()) + "-" + info->test_suite_name() + "-" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~HistoryScratch() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

inline nlohmann::ordered_json received_stream(const std::string& agent, const std::string& peer, std::uint64_t errors,
                                              double bound) {
  using json = nlohmann::ordered_json;
  return json{{"agent", agent},
              {"stream_id", "rx:" + peer + "/1"},
              {"peer", peer},
              {"passed", errors == 0},
              {"counters", {{"rx_frames", 599505}, {"lost_frames", 0}, {"bit_errors", errors}}},
              {"gauges", {{"latency_p99_ns", 236543.0}}},
              {"metrics",
               {{"ber", errors / 6.96e9},
                {"bit_errors", static_cast<double>(errors)},
                {"latency_p99_ns", 236543.0},
                {"loss_ratio", 0.0},
                {"lost_frames", 0.0},
                {"throughput_bps", 238999219.25}}},
              {"ber",
               {{"bits_compared", 6963850080},
                {"bit_errors", errors},
                {"measured", errors / 6.96e9},
                {"upper_bound", bound},
                {"confidence", 0.95}}},
              {"checks", json::array()},
              {"series", json::array()}};
}

inline nlohmann::ordered_json sent_stream(const std::string& agent, const std::string& peer) {
  using json = nlohmann::ordered_json;
  return json{{"agent", agent},
              {"stream_id", "tx:" + peer},
              {"peer", peer},
              {"passed", true},
              {"counters", {{"tx_bytes", 899388000}, {"tx_frames", 599592}}},
              {"gauges", json::object()},
              {"metrics", {{"throughput_bps", 239033902.75}}},
              {"ber", nullptr},
              {"checks", json::array()},
              {"series", json::array()}};
}

inline nlohmann::ordered_json port_stream(const std::string& agent) {
  using json = nlohmann::ordered_json;
  return json{{"agent", agent},
              {"stream_id", "port:net_af_packet0"},
              {"peer", ""},
              {"passed", true},
              {"counters", {{"rx_good_packets", 599506}}},
              {"gauges", json::object()},
              {"metrics", json::object()},
              {"ber", nullptr},
              {"checks", json::array()},
              {"series", json::array()}};
}

// A routed RDMA test: one QP each way across a two-link path, the link into lab-b a suspect.
inline nlohmann::ordered_json routed_test() {
  using json = nlohmann::ordered_json;
  json qp{{"agent", "lab-b"},
          {"stream_id", "sink:lab-a/qp0"},
          {"peer", "lab-a"},
          {"flow",
           {{"src_address", "10.0.1.1"},
            {"src_port", 49152},
            {"dst_address", "10.0.2.1"},
            {"dst_port", 4791},
            {"protocol", "udp"},
            {"text", "10.0.1.1:49152 -> 10.0.2.1:4791 udp"}}},
          {"passed", false},
          {"counters", {{"rx_bytes", 1000000}, {"retransmits", 40}, {"completion_errors", 0}}},
          {"gauges", json::object()},
          {"metrics", {{"throughput_bps", 8e9}, {"retransmits", 40.0}, {"completion_errors", 0.0}}},
          {"ber", nullptr},
          {"checks", json::array()},
          {"series", json::array()}};
  json localisation{{"conclusion", "suspect link s1:l2 -> l2:s1"},
                    {"suspects", json::array({{{"link", "s1:l2 -> l2:s1"},
                                               {"name", "spine-1 eth2 -> leaf-2 eth1 (cable C7)"},
                                               {"confidence", "high"},
                                               {"votes", 0.5},
                                               {"kind", "loss"},
                                               {"rate", 0.02}}})},
                    {"hosts", json::array()},
                    {"flows", json::array({{{"sender", "lab-a"},
                                            {"receiver", "lab-b"},
                                            {"stream", "sink:lab-a/qp0"},
                                            {"passed", false},
                                            {"links", json::array({"l1:s1 -> s1:l1", "s1:l2 -> l2:s1"})}}})}};
  return json{{"index", 1},
              {"name", "fabric"},
              {"engine", "rdma"},
              {"verdict", "fail"},
              {"streams", json::array({qp})},
              {"localisation", localisation}};
}

// A whole report.json of a run of profile `profile` that started at `started`.
inline nlohmann::ordered_json sample_report(const std::string& run_id,
                                            const std::string& started = "2026-11-24T20:19:50.040Z",
                                            const std::string& profile = "lab-dpdk-ber") {
  using json = nlohmann::ordered_json;
  json cable{{"index", 0},
             {"name", "cable"},
             {"engine", "dpdk"},
             {"verdict", "pass"},
             {"streams", json::array({sent_stream("lab-a", "lab-b"), received_stream("lab-a", "lab-b", 0, 4.30e-10),
                                      port_stream("lab-a"), sent_stream("lab-b", "lab-a"),
                                      received_stream("lab-b", "lab-a", 0, 4.30e-10), port_stream("lab-b")})}};
  return json{{"schema", "tusk.report/1"},
              {"tusk_version", "0.1.0"},
              {"run_id", run_id},
              {"profile", {{"name", profile}, {"file", "profiles/" + profile + ".yaml"}, {"description", ""}}},
              {"started", started},
              {"finished", "2026-11-24T20:20:21.700Z"},
              {"exit_code", 0},
              {"conclusion", "all 2 tests passed"},
              {"missing_agents", json::array()},
              {"agents", json::array({{{"name", "lab-a"}}, {{"name", "lab-b"}}})},
              {"tests", json::array({cable, routed_test()})},
              {"faults", json::array()}};
}

}  // namespace tusk::testing
