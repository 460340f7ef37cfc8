// The RDMA engine on real verbs: qemu VMs of tests/lab/rxe-vm-lab.sh, each with a Soft-RoCE
// device per point-to-point link and a tusk-agent, driven by tusk-controller on the host over
// mutual TLS (guests reach the host's 127.0.0.1 at 10.0.2.2). Two VMs for the engine and its
// faults (netem and link down/up inside a guest, on its data NIC); three for the training-step
// replays (ring all-reduce, all-to-all). Needs root and qemu; skips otherwise, saying which. Every
// agent runs as the systemd unit's user would: not root, with only the unit's capabilities.
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "tests/e2e/process.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/fabric_lab.hpp"
#include "tests/support/scripted_controller.hpp"
#include "tests/support/series_rows.hpp"
#include "tests/support/unit_privileges.hpp"

namespace tusk::testing {
namespace {

using testing::FabricLab;
using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

const std::string kLab = "bash " + tusk::build_paths::source_dir() + "/tests/lab/rxe-vm-lab.sh ";
// Three TCG guests on two cores, each with Soft-RoCE traffic, can go unscheduled for seconds: a
// guest once heard nothing from the controller for the default 3 s lease and stopped mid-test. No
// test here is about the lease, so it must outlast a starved guest, not time a lost controller.
const std::string kLease = "10s";

int lab(const std::string& arguments) {
  return std::system((kLab + arguments).c_str());
}

// Each of `commands` at once, their exit codes in that order: a guest exec costs 1.5 s under TCG
// (the spool's poll, a bash, the command), and the guests run their jobs side by side.
std::vector<int> lab_at_once(const std::vector<std::string>& commands) {
  std::vector<std::future<int>> running;
  for (const auto& arguments : commands) running.push_back(std::async(std::launch::async, lab, arguments));
  std::vector<int> codes;
  for (auto& code : running) codes.push_back(code.get());
  return codes;
}

// The last `lines` lines of a file, headed by its name.
std::string tail_of(const fs::path& path, std::size_t lines) {
  const std::string text = read_file(path.string());
  std::size_t from = text.size();
  for (std::size_t seen = 0; from > 0 && seen <= lines;) {
    if (text[--from] == '\n') ++seen;
  }
  return "== " + path.string() + ", last lines\n" + text.substr(from == 0 ? 0 : from + 1);
}

// A profile like profiles/lab-rdma-write.yaml with another duration and thresholds (none: only
// the safe defaults judge).
std::string profile(const std::string& duration, const std::string& thresholds) {
  return R"(name: lab-rdma-fault
agents:
  hosts: [vm1, vm2]
  wait: 60s
tests:
  - name: checked-write
    engine: rdma
    topology: pairs
    duration: )" +
         duration + R"(
    message_size: 64KiB
    outstanding: 8
    signal_every: 1
    ack_timeout: 1s
    data_check: true
)" + (thresholds.empty() ? "" : "    thresholds:\n" + thresholds);
}

// One lab of `kVms` VMs per test suite (booting takes half a minute); one agent per VM per test.
// kOnFabric: the VMs sit on the leaves of a routed fabric lab (tests/lab/fabric-lab.sh, 2 spines,
// 2 leaves), one per leaf, instead of on a mesh of point-to-point links. kRails: that many links
// between every two VMs, one per rail, and each agent offers its devices in rail order.
template <int kVms, bool kOnFabric = false, int kRails = 1>
class VmLabTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) {
      skip_reason_ = "needs root to run the Soft-RoCE VM lab";
    } else if (lab("has-qemu") != 0) {
      skip_reason_ = "qemu-system-x86_64 or busybox-static is not installed (scripts/install-deps.sh installs them)";
    } else {
      id_ = "rv" + std::to_string(kVms) + "-" + std::to_string(getpid() % 100000);
      if (kOnFabric) {
        id_ = "rf" + std::to_string(getpid() % 100000);
        fabric_ =
            std::make_unique<FabricLab>("vf" + std::to_string(getpid() % 10000), "--spines 2 --leaves 2 --hosts 1");
        lab_options_ = " --fabric vf" + std::to_string(getpid() % 10000);
      }
      if (kRails > 1) {
        id_ = "rr" + std::to_string(getpid() % 100000);
        lab_options_ = " --rails " + std::to_string(kRails);
      }
      boot();
    }
  }
  static void TearDownTestSuite() {
    if (!id_.empty()) lab("down " + id_);
    fabric_.reset();
  }

  // The suite's tests share its VMs. A test whose agent would not die (a process stuck in the
  // guest's kernel) or whose fault would not clear taints them, and the next test boots them anew.
  static void boot() {
    boot_failed_ = lab("up " + id_ + " " + std::to_string(kVms) + lab_options_) != 0;
    tainted_.clear();
  }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    if (!tainted_.empty() && !boot_failed_) {
      std::cerr << "rebooting the VM lab " << id_ << ": " << tainted_ << "\n";
      lab("down " + id_);
      boot();
    }
    ASSERT_FALSE(boot_failed_) << "the VM lab did not come up (see its output above)";
    dir_ = make_scratch_dir("tusk-rdma-vm");  // under the host's /tmp, which the guests see read-only
    std::vector<std::string> names;
    for (int vm = 1; vm <= kVms; ++vm) names.push_back("vm" + std::to_string(vm));
    ASSERT_TRUE(copy_of_certs(dir_ + "/certs", names, {"10.0.2.2"})) << "make-certs.sh failed";
    // The guests see the host's files with the host's owners (9p, security_model=none).
    ASSERT_TRUE(give_to_unit_user(dir_)) << "chown " << dir_;
    port_ = free_port();
    ++run_;
    std::vector<std::string> starts;
    for (int number = 1; number <= kVms; ++number) {
      const std::string vm = std::to_string(number);
      const std::string name = "vm" + vm;
      const std::string job = "agent" + std::to_string(run_);
      // Its log goes to the lab's state directory: the guests see the host's /tmp read-only.
      // As the systemd unit runs it: its user (a stand-in uid), its capabilities and its
      // LimitMEMLOCK=infinity, which is all that verbs need to register memory.
      const auto user = as_unit_user(unit_capabilities(), dir_ + "/run-" + name, true);
      ASSERT_FALSE(user.empty()) << "chown " << dir_ << "/run-" << name;  // else the agent would run as root
      std::string as_unit = "prlimit --memlock=unlimited --";
      for (const auto& word : user) as_unit += " " + word;
      starts.push_back("exec " + id_ + " " + vm + " --background --name " + job + " -- " + as_unit + " " +
                       tusk::build_paths::agent_bin() + " --controller 10.0.2.2:" + std::to_string(port_) + " --name " +
                       name + " --ca " + dir_ + "/certs/ca.pem --cert " + dir_ + "/certs/" + name + ".pem --key " +
                       dir_ + "/certs/" + name + ".key --idle-sleep-us 100" + rail_devices() + " >/dev/null");
      agent_jobs_.push_back(vm + " " + job);
    }
    const auto started = lab_at_once(starts);
    for (std::size_t i = 0; i < started.size(); ++i) ASSERT_EQ(started[i], 0) << starts[i];
  }
  void TearDown() override {
    // CI keeps nothing but this output: what the guests were doing when a test failed, read
    // before their agents are stopped (an agent stuck in the kernel shows where).
    if (HasFailure() && !id_.empty() && !boot_failed_) {
      const fs::path state = fs::temp_directory_path() / ("tusk-vmlab-" + id_);
      for (int vm = 1; vm <= kVms; ++vm) {
        std::cerr << tail_of(state / ("vm" + std::to_string(vm)) / "jobs" / ("agent" + std::to_string(run_) + ".log"),
                             40);
        lab("diag " + id_ + " " + std::to_string(vm) + " >&2");
      }
    }
    std::vector<std::string> stops;
    for (const auto& job : agent_jobs_) stops.push_back("stop " + id_ + " " + job + " >/dev/null");
    const auto stopped = lab_at_once(stops);
    for (std::size_t i = 0; i < stopped.size(); ++i) {
      if (stopped[i] != 0) tainted_ += "agent " + agent_jobs_[i] + " would not stop; ";
    }
    // Each NIC once, all at once. `clear` fails where no fault is left (a link test set none):
    // only `link up` must succeed.
    const std::vector<std::string> nics(faulted_nics_.begin(), faulted_nics_.end());
    std::vector<std::string> restores;
    for (const auto& nic : nics) {
      restores.push_back("clear " + id_ + " " + nic + " 2>/dev/null; " + kLab + "link " + id_ + " " + nic +
                         " up 2>/dev/null");
    }
    const auto restored = lab_at_once(restores);
    for (std::size_t i = 0; i < restored.size(); ++i) {
      if (restored[i] != 0) tainted_ += "NIC " + nics[i] + " would not come up; ";
    }
    // A fabric test that stopped between its impair and its clear leaves no fault behind.
    if (fabric_) {
      for (const char* link : {"l1-s1", "l1-s2", "l2-s1", "l2-s2"}) fabric_->run(std::string("clear ") + link);
    }
    // What a failed test leaves in the guests' kernels is unknown: the next one gets fresh VMs.
    if (HasFailure()) tainted_ += "the last test failed; ";
    if (dir_.empty()) return;
    if (HasFailure()) {
      // The lab's state directory goes with the suite: keep this test's agent logs with the rest.
      const fs::path state = fs::temp_directory_path() / ("tusk-vmlab-" + id_);
      for (int vm = 1; vm <= kVms; ++vm) {
        std::error_code ignored;
        fs::copy_file(state / ("vm" + std::to_string(vm)) / "jobs" / ("agent" + std::to_string(run_) + ".log"),
                      fs::path(dir_) / ("agent-vm" + std::to_string(vm) + ".log"), ignored);
      }
      std::cerr << "controller log, agent logs and report kept in " << dir_ << "\n";
    } else {
      fs::remove_all(dir_);
    }
  }

  std::unique_ptr<Process> start_controller(const std::string& profile_path,
                                            const std::vector<std::string>& extra = {}) {
    // A report is never written over: each run gets the directory afresh, the test reads the latest.
    fs::remove_all(dir_ + "/report");
    std::vector<std::string> command{tusk::build_paths::controller_bin(),
                                     "run",
                                     profile_path,
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
                                     "--lease",
                                     kLease,
                                     "--no-history"};
    command.insert(command.end(), extra.begin(), extra.end());
    return std::make_unique<Process>(command, dir_ + "/controller.log");
  }

  int run_profile(const std::string& text, const std::vector<std::string>& extra = {}) {
    std::ofstream(dir_ + "/profile.yaml") << text;
    return start_controller(dir_ + "/profile.yaml", extra)->wait(240s).value_or(-100);
  }

  json report() {
    std::ifstream file(dir_ + "/report/report.json");
    return file.good() ? json::parse(file) : json();
  }

  // Sets netem on a VM's data NIC ("VM NIC", e.g. "2 peer1"); TearDown clears it.
  int impair(const std::string& nic, const std::string& netem) {
    faulted_nics_.insert(nic);
    return lab("impair " + id_ + " " + nic + " " + netem);
  }
  int set_link(const std::string& nic, const std::string& state) {
    faulted_nics_.insert(nic);
    return lab("link " + id_ + " " + nic + " " + state);
  }

  static std::vector<json> streams_of(const json& report, const std::string& prefix, std::size_t test = 0) {
    std::vector<json> streams;
    for (const auto& stream : report["tests"][test]["streams"]) {
      if (stream["stream_id"].get<std::string>().rfind(prefix, 0) == 0) streams.push_back(stream);
    }
    return streams;
  }

  static std::uint64_t counter(const json& stream, const std::string& name) {
    return stream["counters"].contains(name) ? stream["counters"][name].get<std::uint64_t>() : 0;
  }

  std::string logs() { return read_file(dir_ + "/controller.log"); }

  // On a rails lab every VM's rail r is rxeR (rxe-vm-lab.sh): the agent offers them in that order.
  static std::string rail_devices() {
    std::string options;
    for (int r = 0; kRails > 1 && r < kRails; ++r) options += " --rdma-device rxe" + std::to_string(r);
    return options;
  }

  static inline std::unique_ptr<FabricLab> fabric_;
  static inline std::string skip_reason_;
  static inline std::string id_;
  static inline std::string lab_options_;
  static inline bool boot_failed_ = false;
  static inline std::string tainted_;  // why the VMs must boot anew before the next test
  static inline int run_ = 0;
  std::string dir_;
  int port_ = 0;
  std::vector<std::string> agent_jobs_;
  std::set<std::string> faulted_nics_;
};

using RdmaVmLab = VmLabTest<2>;
using FabricVmLab = VmLabTest<2, true>;
using TrainingVmLab = VmLabTest<3>;
using RailsVmLab = VmLabTest<2, false, 2>;

// The shipped profiles/lab-rdma-write.yaml as it is but for its length: 10 s instead of 20 (its
// whole length runs in lab_demo_rdma's second half).
TEST_F(RdmaVmLab, CleanLinkCarriesTenSecondsOfCheckedWritesWithoutAnError) {
  std::string shipped = read_file(tusk::build_paths::source_dir() + "/profiles/lab-rdma-write.yaml");
  const auto duration = shipped.find("duration: 20s");
  ASSERT_NE(duration, std::string::npos) << "the shipped profile's duration moved: update this test";
  shipped.replace(duration, 13, "duration: 10s");
  ASSERT_EQ(run_profile(shipped), 0) << logs();
  const json result = report();
  const auto flows = streams_of(result, "flow:");
  const auto sinks = streams_of(result, "sink:");
  ASSERT_EQ(flows.size(), 2u) << result.dump(2);
  ASSERT_EQ(sinks.size(), 2u) << result.dump(2);
  for (const auto& sink : sinks) {
    EXPECT_GT(counter(sink, "rx_messages"), 50u) << sink.dump(2);
    EXPECT_EQ(counter(sink, "integrity_errors"), 0u);
    EXPECT_EQ(counter(sink, "completion_errors"), 0u);
  }
  for (const auto& flow : flows) {
    EXPECT_EQ(counter(flow, "completion_errors"), 0u);
    // Completion latency of the writes, post to completion: milliseconds in emulated VMs.
    EXPECT_GT(flow["gauges"].value("latency_p50_ns", 0.0), 0.0) << flow.dump(2);
    EXPECT_GE(flow["gauges"].value("latency_p99_ns", 0.0), flow["gauges"].value("latency_p50_ns", 0.0));
    // Throughput per second: one point a second over the 10 s, each with bytes moving, the first
    // too: the QPs connected before the start (issue 16), so the first post is at the start time,
    // not an rdma_cm connect (140-200 ms here) after it.
    const auto series = bin_throughputs(flow);
    EXPECT_GE(series.size(), 9u) << flow.dump(2);
    std::size_t moving = 0;
    for (const double rate : series) moving += rate > 0;
    EXPECT_GE(moving, series.size() - 2) << flow.dump(2);
    ASSERT_FALSE(series.empty());
    EXPECT_GT(series[0], 0) << flow.dump(2);
    // When it first posted, after the start time: within the first sample interval. (Measured
    // 41 and 130 ms in one run, 11 and 118 ms in another, on two cores shared with compilers,
    // where a TCG guest's timers and threads run late: not a bound to assert.)
    // The controller measures throughput from then (Verdict.ThroughputIsMeasuredFromTheStreamsFirstTraffic).
    ASSERT_TRUE(flow["gauges"].contains("traffic_start_delay_ms")) << flow.dump(2);
    const double delay_ms = flow["gauges"]["traffic_start_delay_ms"].get<double>();
    std::cout << flow["stream_id"].get<std::string>() << " of " << flow["agent"].get<std::string>() << ": first post "
              << delay_ms << " ms after the start\n";
    EXPECT_GE(delay_ms, 0.0) << flow.dump(2);
    EXPECT_LT(delay_ms, 1000.0) << flow.dump(2);
  }
  for (const auto& sink : sinks) {  // a sink's from its first message (throughput counts from then)
    ASSERT_TRUE(sink["gauges"].contains("traffic_start_delay_ms")) << sink.dump(2);
    EXPECT_LT(sink["gauges"]["traffic_start_delay_ms"].get<double>(), 1000.0) << sink.dump(2);
  }
  EXPECT_EQ(logs().find("after the start"), std::string::npos) << "a QP connected after the start:\n" << logs();
  // rxe keeps no counters per QP (Linux 6.1 answers a bind with ENOMEM): no flow claims a per-QP rate,
  // and each agent says so once, without binding (a bind was followed by QP destroys stalled in rxe).
  for (const auto& flow : flows) EXPECT_FALSE(flow["counters"].contains("qp_retransmits")) << flow.dump(2);
  for (const auto& agent : result["tests"][0]["agents"]) {
    std::size_t said = 0;
    for (const auto& event : agent["events"]) {
      said += event["message"].get<std::string>().find(
                  "is a software RDMA device (Soft-RoCE), which keeps no "
                  "counters per QP") != std::string::npos;
    }
    EXPECT_EQ(said, 1u) << agent.dump(2);
  }
}

// Each QP reports the UDP source port its packets carry, which is what ECMP hashes onto a path. A
// fault on "the path of the odd ports" (loss on vm1's packets whose source port is odd, as a bad
// link takes the flows hashed onto it) must slow exactly the QPs the report gives odd ports, and
// both ends of a QP must report the same port.
TEST_F(RdmaVmLab, EachQpReportsTheUdpSourcePortItsPacketsCarryAndAFaultOnSomePortsHitsExactlyThoseQps) {
  ASSERT_EQ(lab("impair-ports " + id_ + " 1 peer2 1 1 loss 10%"), 0);
  faulted_nics_.insert("1 peer2");
  std::string text = profile("10s", "");
  text.replace(text.find("    outstanding: 8"), 18, "    qps_per_peer: 8\n    outstanding: 4");
  const int exit = run_profile(text);
  ASSERT_TRUE(exit == 0 || exit == 1) << logs();
  const json result = report();
  std::vector<double> odd, even;
  std::multiset<std::uint32_t> sent_ports, sink_ports;
  for (const auto& flow : streams_of(result, "flow:")) {
    ASSERT_TRUE(flow.contains("flow")) << flow.dump(2);
    const auto port = flow["flow"]["src_port"].get<std::uint32_t>();
    EXPECT_GE(port, 0xC000u);
    EXPECT_EQ(flow["flow"]["dst_port"], 4791);
    EXPECT_EQ(flow["flow"]["protocol"], "udp");
    if (flow["agent"] != "vm1") continue;
    EXPECT_EQ(flow["flow"]["src_address"], "10.99.12.1");
    EXPECT_EQ(flow["flow"]["dst_address"], "10.99.12.2");
    sent_ports.insert(port);
    (port % 2 == 1 ? odd : even).push_back(flow["metrics"]["throughput_bps"].get<double>());
  }
  for (const auto& sink : streams_of(result, "sink:")) {
    if (sink["agent"] == "vm2") sink_ports.insert(sink["flow"]["src_port"].get<std::uint32_t>());
  }
  EXPECT_EQ(sent_ports.size(), 8u);
  EXPECT_EQ(sent_ports, sink_ports) << "both ends of each QP report its port";
  EXPECT_EQ(std::set<std::uint32_t>(sent_ports.begin(), sent_ports.end()).size(), 8u) << "each QP its own port";
  ASSERT_FALSE(odd.empty()) << "no QP of 8 drew an odd port: nothing to compare";
  ASSERT_FALSE(even.empty()) << "no QP of 8 drew an even port: nothing to compare";
  const auto mean = [](const std::vector<double>& values) {
    double sum = 0;
    for (const double v : values) sum += v;
    return sum / static_cast<double>(values.size());
  };
  std::cout << odd.size() << " odd-port QPs " << mean(odd) / 1e6 << " Mbit/s on average, " << even.size()
            << " even-port QPs " << mean(even) / 1e6 << " Mbit/s\n";
  EXPECT_LT(mean(odd), 0.6 * mean(even)) << "odd-port QPs " << mean(odd) << " bit/s, even " << mean(even);
}

// Acceptance (issue 11): Soft-RoCE VMs on two leaves of the routed fabric lab. The QPs that cover
// 2 ECMP paths (11 at 99.9 %) spread over both spines, each reporting its UDP source port; 1 % loss on one
// leaf-to-spine link slows exactly the QPs the leaf's own kernel hashes onto that link (asked with
// `fabric-lab.sh path`), and the report shows the difference between sibling QPs.
TEST_F(FabricVmLab, QpsSpreadOverBothSpinesAndLossOnOneSpineLinkSlowsOnlyTheQpsHashedThroughIt) {
  fabric_->run("impair l1-s1 up loss=1");
  std::string text = profile("20s", "");
  // 99.9 %: 11 QPs, so that both spines carry some in all but 1 run of 1,000.
  text.replace(text.find("    outstanding: 8"), 18, "    ecmp_paths: 2\n    coverage: 99.9%\n    outstanding: 4");
  const int exit = run_profile(text);
  fabric_->run("clear l1-s1");
  ASSERT_TRUE(exit == 0 || exit == 1) << logs();
  const json result = report();
  std::map<std::string, std::vector<double>> throughput_by_uplink;
  std::set<std::uint32_t> ports;
  std::size_t qps = 0;
  for (const auto& flow : streams_of(result, "flow:")) {
    if (flow["agent"] != "vm1") continue;  // vm1 is on leaf 1, vm2 on leaf 2
    ++qps;
    ASSERT_TRUE(flow.contains("flow")) << flow.dump(2);
    EXPECT_EQ(flow["flow"]["src_address"], "192.168.101.21");
    EXPECT_EQ(flow["flow"]["dst_address"], "192.168.102.22");
    const auto port = flow["flow"]["src_port"].get<std::uint32_t>();
    ports.insert(port);
    std::string uplink = fabric_->run("path 192.168.101.21 192.168.102.22 " + std::to_string(port) + " 4791");
    uplink.erase(uplink.find_last_not_of(" \n") + 1);
    throughput_by_uplink[uplink].push_back(flow["metrics"]["throughput_bps"].get<double>());
  }
  // rxe (as mlx5) takes a QP's source port from a 14-bit hash of the two QP numbers: two of 11 share
  // one about once in 300 runs (a local run drew that), three about once in 10^5.
  EXPECT_EQ(qps, 11u) << "2 paths at 99.9 % coverage: 11 QPs";
  EXPECT_GE(ports.size(), 10u) << "the QPs' source ports spread";
  const auto& hit = throughput_by_uplink["l1-s1"];
  const auto& spared = throughput_by_uplink["l1-s2"];
  ASSERT_FALSE(hit.empty()) << "no QP of 11 hashed onto spine 1";
  ASSERT_FALSE(spared.empty()) << "no QP of 11 hashed onto spine 2";
  const auto mean = [](const std::vector<double>& values) {
    double sum = 0;
    for (const double v : values) sum += v;
    return sum / static_cast<double>(values.size());
  };
  std::cout << hit.size() << " QPs through l1-s1 (1 % loss) " << mean(hit) / 1e6 << " Mbit/s on average, "
            << spared.size() << " through l1-s2 " << mean(spared) / 1e6 << " Mbit/s\n";
  EXPECT_LT(mean(hit), 0.6 * mean(spared));
  // The loss shows as retransmits on vm1's port.
  for (const auto& nic : streams_of(result, "nic:")) {
    if (nic["agent"] == "vm1") {
      EXPECT_GT(counter(nic, "retransmits") + counter(nic, "out_of_sequence"), 0u) << nic.dump(2);
    }
  }
}

// Issue 12, acceptance 3: the QPs' paths traced from inside the VMs (UDP probes with each QP's
// source port to 4791), and 3 % loss on one spine link named as the top suspect: the QPs through
// it retransmit and fall far below their siblings. The link and the spine's link to the far leaf
// are crossed by the same QPs; what tells them apart is the probes and the switches' counters.
// Under TCG the probes alone cannot always: the VMs leave 5-15 % of probes unanswered at the first
// hop and every spine answers 10-20 % fewer still, to every flow (its deficit over the far leaf's
// flows is the same, `lost_share_elsewhere`), so 3 % more past the lossy link is 2 to 11 standard
// errors from run to run, and at under 3 the probes rightly call it a tie. Before the localiser
// asked whether a deficit persists past its hop, such a tie could name the far leaf's link at
// high confidence: the far leaf is the last hop that answers (vm2's NIC answers no probe), and a
// leaf answering a few percent fewer probes (a busy control plane, ICMP policing) looked like loss
// starting on the link into it. Now that is the far leaf's own (unit tests:
// Localisation.APolicingLastAnsweringHop...), and the switches' counters, which count every frame,
// decide between the twins whatever the probes show.
// 99.99 % coverage of 2 paths is 15 QPs. At 11 (99.9 %) a CI run hashed 10 onto the other spine
// (a 1-in-170 draw), and one failing flow is rightly only a low-confidence suspect: what the test
// asserts follows the hash the run drew, so no draw fails it and none passes it by luck.
TEST_F(FabricVmLab, LossOnOneSpineLinkIsTheTopSuspectFromTheQpsTracedPaths) {
  fabric_->run("impair l1-s1 up loss=3");
  const std::string topology = dir_ + "/topology.yaml";
  std::ofstream(topology) << fabric_->run("topology-file --snmp v2c");
  const std::string credentials = dir_ + "/snmp.yaml";
  std::ofstream(credentials) << fabric_->run("snmp-credentials");
  std::string text = profile("20s", "");
  text.replace(text.find("    outstanding: 8"), 18,
               "    ecmp_paths: 2\n    coverage: 99.99%\n    outstanding: 4\n    trace_rate: 1000");
  const int exit =
      run_profile(text, {"--topology", topology, "--snmp-credentials", credentials, "--snmp-settle", "4s"});
  fabric_->run("clear l1-s1");
  ASSERT_TRUE(exit == 0 || exit == 1) << logs();
  const json test = report()["tests"][0];
  const json found = test["localisation"];
  ASSERT_TRUE(found.is_object()) << logs();
  // Every QP of vm1's traced: its leaf, a spine, the far leaf (vm2's NIC answers nothing). A flow
  // is a 5-tuple: rxe, as mlx5, takes a QP's source port from a 14-bit hash of the two QP numbers,
  // so two of the 15 may share one (a CI run drew that), and then they are one flow on one path.
  std::set<std::string> vm1_tuples, traced_tuples;
  std::size_t vm1_qps = 0;
  for (const auto& stream : test["streams"]) {
    if (stream["agent"] != "vm1" || stream["kind"] != "flow") continue;
    ++vm1_qps;
    vm1_tuples.insert(stream["flow"]["text"].get<std::string>());
  }
  ASSERT_EQ(vm1_qps, 15u);
  std::size_t traced = 0, through_lossy_spine = 0;
  for (const auto& flow : found["flows"]) {
    if (flow["sender"] != "vm1") continue;
    ++traced;
    traced_tuples.insert(flow["flow"].get<std::string>());
    ASSERT_GE(flow["nodes"].size(), 4u) << flow.dump(1);
    EXPECT_EQ(flow["nodes"][1], "l1");
    EXPECT_EQ(flow["nodes"][3], "l2");
    if (flow["nodes"][2] == "s1") ++through_lossy_spine;
  }
  EXPECT_EQ(traced, vm1_tuples.size()) << found["flows"].dump(1).substr(0, 3000);
  EXPECT_EQ(traced_tuples, vm1_tuples) << "each 5-tuple one flow";
  std::cout << through_lossy_spine << " of vm1's QPs through s1; localisation: " << found["conclusion"] << "\n";
  if (!found["suspects"].empty()) std::cout << "top suspect: " << found["suspects"][0].dump() << "\n";
  // Whatever the hash drew, no other link is ever named with more than low confidence.
  for (const auto& suspect : found["suspects"]) {
    if (suspect["confidence"] == "low") continue;
    EXPECT_EQ(suspect["link"], "l1:s1 -> s1:l1") << found["conclusion"];
  }
  if (through_lossy_spine < 2) {
    // One flow through the fault is no pattern: at most a low-confidence suspect, saying so.
    if (!found["suspects"].empty() && found["suspects"][0]["link"] == "l1:s1 -> s1:l1") {
      EXPECT_EQ(found["suspects"][0]["confidence"], "low") << found["conclusion"];
      EXPECT_NE(found["suspects"][0]["evidence"].get<std::string>().find("only one failing flow crossed it"),
                std::string::npos)
          << found["conclusion"];
    }
    return;
  }
  ASSERT_FALSE(found["suspects"].empty()) << found["conclusion"] << "\n" << logs();
  EXPECT_EQ(found["suspects"][0]["link"], "l1:s1 -> s1:l1") << found["conclusion"];
  EXPECT_NE(found["suspects"][0]["confidence"], "low") << found["conclusion"];
  EXPECT_TRUE(found["suspects"][0]["switch_counters"]["confirmed"].get<bool>()) << found["suspects"][0].dump(1);
  for (const auto& suspect : found["suspects"]) EXPECT_EQ(suspect["link"], "l1:s1 -> s1:l1") << found["conclusion"];
}

TEST_F(RdmaVmLab, OnePercentLossOnOneNicRaisesRetransmitCountersOnThatLinkAndFails) {
  ASSERT_EQ(impair("2 peer1", "loss 1%"), 0);
  const int exit_code = run_profile(profile("6s", "      max_retransmits: 0\n      max_integrity_errors: 0\n"));
  EXPECT_EQ(exit_code, 1) << logs();
  const json result = report();
  const auto nics = streams_of(result, "nic:");
  ASSERT_EQ(nics.size(), 2u) << result.dump(2);
  std::uint64_t out_of_sequence = 0;
  for (const auto& nic : nics) {
    // Each host's port is named with the peer at the other end of its link: the fault's link.
    EXPECT_EQ(nic["peer"], nic["agent"] == "vm1" ? "vm2" : "vm1");
    out_of_sequence += counter(nic, "out_of_sequence");
    if (nic["agent"] == "vm2") {
      // vm2's own writes lose packets on its way out: its requester times out and sends again.
      EXPECT_GT(counter(nic, "retransmits"), 0u) << nic.dump(2);
    }
  }
  EXPECT_GT(out_of_sequence, 0u) << "a responder saw the gaps the loss left";
  for (const auto& sink : streams_of(result, "sink:")) EXPECT_EQ(counter(sink, "integrity_errors"), 0u);
}

TEST_F(RdmaVmLab, OnePercentCorruptionIsDroppedByTheNicAndShowsAsRetransmitsNotBadData) {
  ASSERT_EQ(impair("1 peer2", "corrupt 1%"), 0);
  const int exit_code = run_profile(profile("6s", "      max_retransmits: 0\n      max_integrity_errors: 0\n"));
  EXPECT_EQ(exit_code, 1) << logs();
  const json result = report();
  std::uint64_t retransmits = 0;
  for (const auto& nic : streams_of(result, "nic:")) retransmits += counter(nic, "retransmits");
  EXPECT_GT(retransmits, 0u) << result.dump(2);
  // The ICRC caught every corrupted packet: no corrupted byte reached a checked message.
  for (const auto& sink : streams_of(result, "sink:")) {
    EXPECT_GT(counter(sink, "rx_messages"), 0u);
    EXPECT_EQ(counter(sink, "integrity_errors"), 0u);
  }
}

// A profile without thresholds: the safe defaults judge the outage. Whatever the QPs do in those
// 2 s (their retries ride it out, or run out and the flow fails), the port's flap is counted on the
// link that went down, every flow either failed saying so or carried on after the outage, and the
// run fails on the flap: an outage never reads as a pass.
// The test runs 30 s: the outage ends about 12 s in, and a QP's retries (1 s ACK timeout, 7 retries)
// can take 8 s more, so in the last 10 s every flow has resumed, failed, or been silent for longer
// than the 5 s stall timeout. (At 20 s, a flow that came back for one second and went quiet again
// in the last 4 s was none of these, and the test failed on a run that was right.)
TEST_F(RdmaVmLab, DataNicDownForTwoSecondsIsReportedAndTheFlowsCarryOnOrFailWithoutHanging) {
  std::ofstream(dir_ + "/profile.yaml") << profile("30s", "");
  auto controller = start_controller(dir_ + "/profile.yaml");
  // Down 2 s, about 8 s into the test (the run starts once both agents registered and synced).
  ASSERT_TRUE(wait_for_text(dir_ + "/controller.log", "rdma engine, 30 s", 120s)) << logs();
  std::this_thread::sleep_for(8s);
  ASSERT_EQ(set_link("1 peer2", "down"), 0);
  std::this_thread::sleep_for(2s);
  ASSERT_EQ(set_link("1 peer2", "up"), 0);
  const auto exit_code = controller->wait(120s);
  ASSERT_TRUE(exit_code.has_value()) << "the run hung after the link came back:\n" << logs();
  EXPECT_EQ(*exit_code, 1) << logs();
  const json result = report();

  // The flap, on vm1's port, named with the peer at the other end of that link, and failing.
  bool flap_seen = false;
  for (const auto& nic : streams_of(result, "nic:")) {
    if (nic["agent"] != "vm1") continue;
    EXPECT_EQ(nic["peer"], "vm2") << nic.dump(2);
    if (counter(nic, "link_flaps") >= 1) {
      flap_seen = true;
      EXPECT_FALSE(nic["passed"].get<bool>()) << nic.dump(2);
    }
  }
  EXPECT_TRUE(flap_seen) << result.dump(2);
  EXPECT_NE(logs().find("link_flaps"), std::string::npos) << "the summary names the flap:\n" << logs();

  const auto flows = streams_of(result, "flow:");
  ASSERT_EQ(flows.size(), 2u) << result.dump(2);
  for (const auto& flow : flows) {
    // Policy "stop the flow": a completion error stops it (and fails it); a flow left waiting on
    // its peer's failed QP is reported stalled (and fails); or the retries rode the outage out
    // and bytes moved again in the last seconds.
    const bool completion_error = counter(flow, "completion_errors") > 0;
    const bool stalled = counter(flow, "stalls") > 0;
    const auto series = bin_throughputs(flow);
    ASSERT_GE(series.size(), 20u) << flow.dump(2);
    bool resumed = false;  // bytes moved in the last 10 s, well after the outage and the retries
    for (std::size_t i = series.size() - 10; i < series.size(); ++i) resumed |= series[i] > 0;
    EXPECT_TRUE(completion_error || stalled || resumed) << flow.dump(2);
    if (completion_error || stalled) {
      EXPECT_FALSE(flow["passed"].get<bool>()) << flow.dump(2);
    }
  }
}

// The next test's engine listens on the port the last one's listener held, at once, while the
// kernel may still be destroying the last one's QPs: rxe frees a QP only once the stack has freed
// every packet it sent, and here a slow token bucket on vm1's NIC holds them (netem would not: it
// orphans what it delays). Seen in CI's lab demo (two runs back to back): "plan refused by vm1:
// rdma_cm: cannot listen on port 7471: rdma_bind_addr: Cannot assign requested address"
// (rdma_cm's EADDRNOTAVAIL: a port another listener holds). A stopped engine's listener goes with
// its traffic; its QPs go later.
TEST_F(RdmaVmLab, ATestRightAfterAnotherListensWhileTheKernelStillHoldsTheLastOnesQps) {
  std::string text = profile("6s", "");
  const std::string first = "  - name: checked-write\n";
  text += text.substr(text.find(first)).replace(0, first.size(), "  - name: right-after\n");
  std::ofstream(dir_ + "/profile.yaml") << text;
  auto controller = start_controller(dir_ + "/profile.yaml");
  ASSERT_TRUE(wait_for_text(dir_ + "/controller.log", "rdma engine, 6 s", 120s)) << logs();
  std::this_thread::sleep_for(2s);  // connected: the queue holds the flows' packets, not the connects
  faulted_nics_.insert("1 peer2");
  ASSERT_EQ(lab("exec " + id_ + " 1 --cwd / -- tc qdisc replace dev data0 root tbf rate 1mbit burst 16k latency 30s"),
            0);
  const auto exit_code = controller->wait(180s);
  ASSERT_TRUE(exit_code.has_value()) << logs();
  EXPECT_EQ(logs().find("plan refused"), std::string::npos) << logs();
  EXPECT_EQ(logs().find("cannot listen"), std::string::npos) << logs();
  const json result = report();
  ASSERT_EQ(result["tests"].size(), 2u) << result.dump(1).substr(0, 4000);
  // The second test ran on both agents: each prepared, connected its flow and sampled it.
  EXPECT_EQ(streams_of(result, "flow:", 1).size(), 2u) << result["tests"][1].dump(1).substr(0, 4000);
}

// Issue 32 on real verbs: vm2's engine takes connections only from its plan's senders, with the
// flows their plan makes, from their own addresses. While a clean run goes, forged requests
// (tusk-lab-rdma-connect) reach it: a name no plan has, vm1's name with a flow its plan does not
// make, and vm1's name from vm2's own address. Each is refused before anything is pinned and said
// in vm2's events, and the run's own flows carry on and pass.
TEST_F(RdmaVmLab, ForgedConnectionRequestsAreRefusedAndTheRunsOwnFlowsPass) {
  std::ofstream(dir_ + "/profile.yaml") << profile("15s", "");
  auto controller = start_controller(dir_ + "/profile.yaml");
  ASSERT_TRUE(wait_for_text(dir_ + "/controller.log", "rdma engine, 15 s", 120s)) << logs();
  // All three at once: one after another, the guests' exec latency under load (seconds each) let
  // the last one arrive after the test.
  const std::string forge = " -- " + tusk::build_paths::lab_rdma_connect_bin() + " ";
  const std::vector<std::pair<std::string, std::string>> forgeries{
      {"1", "intruder 10.99.12.2"}, {"1", "vm1 10.99.12.2 5"}, {"2", "vm1 10.99.12.2"}};
  for (std::size_t i = 0; i < forgeries.size(); ++i) {
    ASSERT_EQ(lab("exec " + id_ + " " + forgeries[i].first + " --background --name forge" + std::to_string(run_) + "-" +
                  std::to_string(i) + forge + forgeries[i].second + " >/dev/null"),
              0);
  }
  for (std::size_t i = 0; i < forgeries.size(); ++i) {
    // Refused: the forger exits 1 ("rejected (status 28)").
    EXPECT_NE(lab("wait " + id_ + " " + forgeries[i].first + " forge" + std::to_string(run_) + "-" + std::to_string(i) +
                  " --timeout 60 >/dev/null"),
              0)
        << forgeries[i].second;
  }
  const auto exit_code = controller->wait(120s);
  ASSERT_TRUE(exit_code.has_value()) << logs();
  EXPECT_EQ(*exit_code, 0) << logs();
  const json result = report();
  std::string refusals;
  for (const auto& agent : result["tests"][0]["agents"]) {
    if (agent["agent"] != "vm2") continue;
    for (const auto& event : agent["events"]) refusals += event["message"].get<std::string>() + "\n";
  }
  std::cout << "vm2's events:\n" << refusals;
  EXPECT_NE(refusals.find("refused a connection claiming to be intruder QP 0 from 10.99.12.1: 'intruder' is not a "
                          "sender of this test"),
            std::string::npos)
      << refusals;
  EXPECT_NE(refusals.find("claiming to be vm1 QP 5 from 10.99.12.1: flow 5 is not one of the 1 its plan makes"),
            std::string::npos)
      << refusals;
  EXPECT_NE(refusals.find("claiming to be vm1 QP 0 from 10.99.12.2: it comes from 10.99.12.2, not from vm1's address "
                          "10.99.12.1"),
            std::string::npos)
      << refusals;
  for (const auto& flow : streams_of(result, "flow:")) EXPECT_TRUE(flow["passed"].get<bool>()) << flow.dump(2);
}

// Issue 33 on real verbs: ib_port, gid_index and path_mtu are held against the route rdma_cm
// resolved. The lab's data NICs have MTU 9000, so rxe runs at path MTU 4096 from port 1 with the
// IPv4 GID at index 1: a test that says so runs and passes; one that asks for path MTU 1024 is
// refused on every QP with what the route gives, and fails.
TEST_F(RdmaVmLab, TheProfilesPortGidIndexAndPathMtuAreCheckedAgainstTheRouteRdmaCmResolved) {
  const int exit_code = run_profile(R"(name: lab-rdma-route
agents:
  hosts: [vm1, vm2]
  wait: 60s
defaults:
  engine: rdma
  duration: 3s
  topology: pairs
  message_size: 16KiB
  outstanding: 8
  ack_timeout: 1s
  ib_port: 1
  gid_index: 1
tests:
  - name: as-the-route-is
    path_mtu: 4096
  - name: smaller-path-mtu
    path_mtu: 1024
)");
  ASSERT_EQ(exit_code, 1) << logs();
  const json result = report();
  ASSERT_EQ(result["tests"].size(), 2u) << logs();
  EXPECT_EQ(result["tests"][0]["verdict"], "pass") << result["tests"][0].dump(1).substr(0, 3000);
  EXPECT_EQ(result["tests"][1]["verdict"], "fail");
  std::string refusals;
  for (const auto& agent : result["tests"][1]["agents"]) {
    for (const auto& event : agent["events"]) refusals += event["message"].get<std::string>() + "\n";
  }
  EXPECT_NE(refusals.find("would run at path MTU 4096 (rdma_cm's, the port's active MTU), not the profile's path_mtu "
                          "1024"),
            std::string::npos)
      << refusals << logs();
  // Before: every QP refused, nothing carried, and the test passed on its zeros.
  const auto flows = streams_of(result, "flow:", 1);
  ASSERT_EQ(flows.size(), 2u);
  for (const auto& flow : flows) {
    EXPECT_EQ(counter(flow, "connect_failures"), 1u) << flow.dump(2);
    EXPECT_FALSE(flow["passed"].get<bool>()) << flow.dump(2);
  }
  for (const auto& flow : streams_of(result, "flow:", 0)) EXPECT_EQ(counter(flow, "connect_failures"), 0u);
}

// Issue 32 on real verbs: a hostile controller's RDMA plans (tests/support/scripted_controller.hpp
// speaks the wire; no profile can make these) reach the agent of a Soft-RoCE VM. Each is refused
// with its field and bound before the engine pins or connects anything, the agent stays
// registered, and an honest plan after them connects its QPs on the same device.
TEST_F(RdmaVmLab, AHostileControllersPlansAreRefusedByTheAgentWhichThenConnectsAnHonestPlan) {
  ScriptedController controller(
      static_cast<std::uint16_t>(port_),
      {dir_ + "/certs/ca.pem", dir_ + "/certs/controller.pem", dir_ + "/certs/controller.key"});
  ASSERT_TRUE(controller.wait_for_agents({"vm1", "vm2"}, 120s)) << "the VMs' agents did not register";
  const auto plan_for = [](const std::string& peer, const std::string& address, bool sender) {
    proto::Plan plan;
    plan.set_run_id("hostile");
    plan.set_engine("rdma");
    plan.set_duration_ms(3000);
    plan.set_sample_interval_ms(1000);
    plan.set_max_rate_bps(1e9);
    plan.set_max_duration_ms(60'000);
    auto* endpoint = sender ? plan.add_peers() : plan.add_senders();
    endpoint->set_agent_name(peer);
    endpoint->set_address(address);
    auto* rdma = plan.mutable_rdma();
    rdma->set_message_size(65536);
    rdma->set_outstanding(8);
    rdma->set_ack_timeout(18);  // about 1 s: TCG guests
    rdma->set_data_check(true);
    rdma->set_rate_bps(1e8);
    return plan;
  };
  struct Hostile {
    std::function<void(proto::Plan&)> change;
    std::string refusal;
  };
  const std::vector<Hostile> hostile{
      // Before: checked as 64 bits, kept as 32: 8-byte slots that the 24-byte header overran.
      {[](proto::Plan& p) { p.mutable_rdma()->set_message_size((std::uint64_t{1} << 32) + 8); },
       "message_size 4294967304 is out of range (at most 1073741824)"},
      // Before: a division by zero in the pacing.
      {[](proto::Plan& p) { p.mutable_rdma()->set_message_size(0); }, "message_size 0"},
      {[](proto::Plan& p) { p.mutable_rdma()->set_message_size(8); }, "cannot hold the 24 B header"},
      {[](proto::Plan& p) { p.mutable_rdma()->set_qps_per_peer(1'000'000); }, "qps_per_peer 1000000 is out of range"},
      {[](proto::Plan& p) { p.mutable_rdma()->set_outstanding(4'000'000'000u); },
       "outstanding 4000000000 is out of range"},
      {[](proto::Plan& p) {
         p.mutable_rdma()->set_qps_per_peer(1024);
         p.mutable_rdma()->set_outstanding(8192);
       },
       "1024 QPs of 16384 messages of 65536 B would pin 1024 GiB, more than 32 GiB"},
      {[](proto::Plan& p) { p.mutable_rdma()->set_rate_bps(std::nan("")); }, "rate_bps nan"},
      {[](proto::Plan& p) { p.mutable_rdma()->set_cm_port(70000); }, "cm_port 70000"},
      {[](proto::Plan& p) { p.mutable_rdma()->set_operation("atomic"); }, "unknown RDMA operation 'atomic'"},
      // The plan's own safety caps, held by the agent too.
      {[](proto::Plan& p) { p.set_duration_ms(120'000); }, "duration 120000 ms is over the plan's safety cap"},
      {[](proto::Plan& p) { p.mutable_rdma()->set_rate_bps(1e10); }, "bit/s is over the plan's safety cap"},
  };
  for (std::size_t i = 0; i < hostile.size(); ++i) {
    proto::Plan plan = plan_for("vm2", "10.99.12.2", true);
    plan.set_test_index(static_cast<int>(i));
    hostile[i].change(plan);
    controller.send_plan("vm1", plan);
    const auto answer = controller.answer("vm1", "hostile", static_cast<int>(i), 60s);
    ASSERT_TRUE(answer.has_value()) << "no answer to hostile plan " << i << "; vm1 "
                                    << (controller.connected("vm1") ? "still connected"
                                                                    : controller.closed_reason("vm1"));
    EXPECT_FALSE(answer->ok()) << "hostile plan " << i << " was accepted: " << plan.ShortDebugString();
    EXPECT_NE(answer->error().find(hostile[i].refusal), std::string::npos)
        << "plan " << i << " was refused with '" << answer->error() << "', not '" << hostile[i].refusal << "'";
    std::cout << "hostile plan " << i << ": " << answer->error() << "\n";
  }
  ASSERT_TRUE(controller.connected("vm1")) << controller.closed_reason("vm1");
  // The honest pair: vm1 writes to vm2, whose plan names vm1 as its sender. Each agent answers
  // once its QPs are connected.
  const int honest = 100;
  proto::Plan sender = plan_for("vm2", "10.99.12.2", true);
  proto::Plan receiver = plan_for("vm1", "10.99.12.1", false);
  sender.set_test_index(honest);
  receiver.set_test_index(honest);
  controller.send_plan("vm2", receiver);
  controller.send_plan("vm1", sender);
  for (const std::string agent : {"vm1", "vm2"}) {
    const auto answer = controller.answer(agent, "hostile", honest, 90s);
    ASSERT_TRUE(answer.has_value()) << agent << " did not answer the honest plan";
    EXPECT_TRUE(answer->ok()) << agent << ": " << answer->error();
    controller.send_stop(agent, "hostile", honest);
  }
  EXPECT_TRUE(controller.connected("vm1") && controller.connected("vm2"));
}

// Recovery: the same outage under `recovery: reconnect`. vm1's port goes down for 2 s: its flows
// break at once, and when the port is up again they are disconnected and connected anew; vm2,
// whose own port never went down, learns of it from the disconnect and reconnects its flow too.
// Every flow and sink carries on counting in one stream, and reports the time it carried nothing:
// the outage the port itself measured (the 2 s, within 300 ms), and the reconnect after it, which
// it reports apart; vm2's streams add the wait for vm1's disconnect.
TEST_F(RdmaVmLab, UnderReconnectAFlowResumesAfterATwoSecondLinkDownAndReportsItsDowntime) {
  std::ofstream(dir_ + "/profile.yaml") << profile("20s", "      max_flaps: 1\n") << "    recovery: reconnect\n";
  auto controller = start_controller(dir_ + "/profile.yaml");
  ASSERT_TRUE(wait_for_text(dir_ + "/controller.log", "rdma engine, 20 s", 120s)) << logs();
  std::this_thread::sleep_for(6s);
  // Down and up by one process in the guest: two lab commands would add their exec latency (up to
  // 2 s under TCG) to the outage. vm1's NIC facing vm2 is data0 in a 2-VM lab.
  faulted_nics_.insert("1 peer2");
  ASSERT_EQ(lab("exec " + id_ + " 1 -- " + tusk::build_paths::lab_flap_bin() + " data0 2"), 0);
  const auto exit_code = controller->wait(120s);
  ASSERT_TRUE(exit_code.has_value()) << "the run hung after the link came back:\n" << logs();
  // The flap is allowed (max_flaps: 1) and nothing else went wrong: the flows came back.
  EXPECT_EQ(*exit_code, 0) << logs();
  const json result = report();

  double port_down_ms = 0;
  for (const auto& nic : streams_of(result, "nic:")) {
    if (nic["agent"] != "vm1") continue;
    EXPECT_EQ(counter(nic, "link_downs"), 1u) << nic.dump(2);
    port_down_ms = static_cast<double>(counter(nic, "link_down_ms"));
  }
  std::cout << "vm1's port was down " << port_down_ms << " ms\n";
  EXPECT_NEAR(port_down_ms, 2000, 300) << result.dump(2);

  // vm2 learns of the break only when vm1, its port up again, disconnects the broken QPs: at most
  // vm1's own reconnect after the outage (a first message after link-up can be lost while the
  // neighbours come back, and its retry takes about a second in TCG guests: one run measured
  // 1128 ms of reconnect on vm1 and 3161 ms of downtime less reconnect on vm2).
  double vm1_reconnect_ms = 0;
  for (const std::string kind : {"flow:", "sink:"}) {
    for (const auto& stream : streams_of(result, kind)) {
      if (stream["agent"] == "vm1") {
        vm1_reconnect_ms = std::max(vm1_reconnect_ms, static_cast<double>(counter(stream, "reconnect_ms")));
      }
    }
  }
  for (const std::string kind : {"flow:", "sink:"}) {
    const auto streams = streams_of(result, kind);
    ASSERT_EQ(streams.size(), 2u) << "one stream per flow, however many QPs carried it:\n" << result.dump(2);
    for (const auto& stream : streams) {
      const std::string name = stream["agent"].get<std::string>() + " " + stream["stream_id"].get<std::string>();
      const double downtime_ms = static_cast<double>(counter(stream, "downtime_ms"));
      const double reconnect_ms = static_cast<double>(counter(stream, "reconnect_ms"));
      std::cout << name << ": " << counter(stream, "reconnects") << " reconnects, down " << downtime_ms
                << " ms, of which reconnecting " << reconnect_ms << " ms\n";
      EXPECT_GE(counter(stream, "reconnects"), 1u) << name << "\n" << stream.dump(2);
      // The flow's downtime is the outage, then the reconnect once the link was back (68-360 ms in
      // TCG guests as a rule, a connect's handshake and resources on both sides): on vm1, whose
      // port went down, the outage within 300 ms; on vm2 the outage and at most vm1's reconnect.
      if (stream["agent"] == "vm1") {
        EXPECT_NEAR(downtime_ms - reconnect_ms, port_down_ms, 300) << name << "\n" << stream.dump(2);
      } else {
        EXPECT_GE(downtime_ms - reconnect_ms, port_down_ms - 300) << name << "\n" << stream.dump(2);
        EXPECT_LE(downtime_ms - reconnect_ms, port_down_ms + vm1_reconnect_ms + 300) << name << "\n" << stream.dump(2);
      }
      EXPECT_GT(reconnect_ms, 0) << name << "\n" << stream.dump(2);
      // A reconnect, not a hang: the resolve and connect retries (300 ms timeout, then every 20 to
      // 250 ms) take a few seconds at most; the last 5 s carrying traffic is checked below.
      EXPECT_LT(reconnect_ms, 4000) << name << "\n" << stream.dump(2);
      EXPECT_EQ(counter(stream, "completion_errors"), 0u) << name << "\n" << stream.dump(2);
      EXPECT_EQ(counter(stream, "integrity_errors"), 0u) << name << "\n" << stream.dump(2);
      // Counting carried on: bytes moved in each of the last 5 s, long after the outage.
      const auto series = bin_throughputs(stream);
      ASSERT_GE(series.size(), 15u) << name << "\n" << stream.dump(2);
      for (std::size_t i = series.size() - 5; i < series.size(); ++i) {
        EXPECT_GT(series[i], 0) << name << " second " << i << "\n" << stream.dump(2);
      }
    }
  }
  EXPECT_NE(logs().find("resumed on a new QP"), std::string::npos) << logs();
}

TEST_F(RdmaVmLab, CheckedSendsAndReadsPassOnACleanLinkAndASampledCheckSaysItsShare) {
  const int exit_code = run_profile(R"(name: lab-rdma-send-read
agents:
  hosts: [vm1, vm2]
  wait: 60s
defaults:
  duration: 5s
  topology: pairs
  message_size: 16KiB
  outstanding: 8
  ack_timeout: 1s
  data_check: true
  thresholds:
    max_integrity_errors: 0
    max_completion_errors: 0
tests:
  - name: send
    engine: rdma
    operation: send
    check_every: 4
  - name: read
    engine: rdma
    operation: read
)");
  ASSERT_EQ(exit_code, 0) << logs();
  const json result = report();
  ASSERT_EQ(result["tests"].size(), 2u);
  // SEND: the receiver checks each message's header where its receive WR put it, and (check_every:
  // 4) the payload of one message in four, and says what share of the bytes that was.
  std::size_t sinks = 0;
  for (const auto& stream : result["tests"][0]["streams"]) {
    if (stream["stream_id"].get<std::string>().rfind("sink:", 0) != 0) continue;
    ++sinks;
    const std::uint64_t messages = counter(stream, "rx_messages");
    EXPECT_GT(messages, 50u) << stream.dump(2);
    EXPECT_TRUE(stream["counters"].contains("integrity_errors"));
    // Messages 0, 4, 8, ...: a quarter, rounded up.
    EXPECT_EQ(counter(stream, "payload_bytes_checked"), (messages + 3) / 4 * 16384) << stream.dump(2);
    EXPECT_NEAR(stream["gauges"].value("payload_checked_share", 0.0), 0.25, 0.02) << stream.dump(2);
  }
  EXPECT_EQ(sinks, 2u);
  // READ: the initiator pulls the target's messages and checks them itself.
  std::size_t reads = 0;
  for (const auto& stream : result["tests"][1]["streams"]) {
    if (stream["stream_id"].get<std::string>().rfind("read:", 0) != 0) continue;
    ++reads;
    EXPECT_GT(counter(stream, "rx_messages"), 50u) << stream.dump(2);
    EXPECT_TRUE(stream["counters"].contains("integrity_errors"));
    EXPECT_EQ(stream["gauges"].value("payload_checked_share", 0.0), 1.0) << stream.dump(2);  // every message
  }
  EXPECT_EQ(reads, 2u);
}

// perftest's -a on real verbs: message_sizes runs one ordinary test per size, and the report has
// one row per size with what it sent, its message rate and its completion latency.
TEST_F(RdmaVmLab, AMessageSizeSweepOfFiveSizesReportsFiveRowsOfBandwidthMessageRateAndLatency) {
  const int exit_code = run_profile(R"(name: lab-rdma-sweep
agents:
  hosts: [vm1, vm2]
  wait: 60s
tests:
  - name: sizes
    engine: rdma
    topology: pairs
    duration: 2s
    message_sizes: [256B, 4KiB, 64KiB, 256KiB, 1MiB]
    outstanding: 8
    ack_timeout: 1s
    data_check: true
)");
  ASSERT_EQ(exit_code, 0) << logs();
  const json result = report();
  const json& method = result["tests"][0]["method"];
  ASSERT_EQ(method["steps"].size(), 5u) << method.dump(2);
  const std::vector<std::string> labels{"256 B", "4096 B", "65536 B", "262144 B", "1048576 B"};
  const std::vector<double> sizes{256, 4096, 65536, 262144, 1048576};
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const json& row = method["steps"][i];
    EXPECT_EQ(row["label"], labels[i]);
    EXPECT_EQ(row["verdict"], "pass") << row.dump(2);
    EXPECT_GT(row["sent_bps"].get<double>(), 0) << row.dump(2);
    EXPECT_GT(row["messages_per_s"].get<double>(), 0) << row.dump(2);
    EXPECT_GT(row["latency_p99_ns"].get<double>(), 0) << row.dump(2);
    // Each step moved messages of its own size: bytes sent over messages completed, both senders.
    const double bytes_per_message = row["sent_bps"].get<double>() / 8 * 2 / row["messages_per_s"].get<double>();
    EXPECT_NEAR(bytes_per_message, sizes[i], sizes[i] * 0.01) << row.dump(2);
  }
  EXPECT_NE(logs().find("messages/s"), std::string::npos) << logs();
}

// A collective of S bytes per step over G = 3 ranks, 5 steps of 4 s (1 s of compute, then send).
// Three TCG guests on two cores move 10 to 20 Mbit/s per flow: each rank's 2 MB a step needs up to
// 1.6 s of the 3 s window (a 3 s step with 4 MB overran it once, and the run had 4 steps, not 5).
// `extra`: more keys of the test (each line indented by four spaces).
// Three steps of 4 s: each has a compute second with no traffic and a second or more with it.
constexpr int kCollectiveSteps = 3;

std::string collective_profile(const std::string& collective, const std::string& bytes,
                               const std::string& hosts = "[vm1, vm2, vm3]", const std::string& extra = "") {
  return R"(name: lab-collective
agents:
  hosts: )" +
         hosts + R"(
  wait: 90s
tests:
  - name: replay
    engine: rdma
)" + extra +
         R"(    collective: )" + collective + R"(
    collective_bytes: )" +
         bytes + R"(
    steps: )" +
         std::to_string(kCollectiveSteps) + R"(
    step_period: 4s
    compute_time: 1s
    message_size: 64KiB
    outstanding: 8
    ack_timeout: 1s
    data_check: true
    thresholds:
      max_integrity_errors: 0
      max_completion_errors: 0
)";
}

// Per agent, the bytes its flows sent, by peer.
std::map<std::string, std::map<std::string, double>> sent_by_link(const std::vector<json>& flows) {
  std::map<std::string, std::map<std::string, double>> sent;
  for (const auto& flow : flows) {
    sent[flow["agent"]][flow["peer"]] += static_cast<double>(flow["counters"]["tx_bytes"].get<std::uint64_t>());
  }
  return sent;
}

TEST_F(TrainingVmLab, RingAllReduceSendsTwoGMinusOneOverGOfSEachStepInTheStepsRhythm) {
  ASSERT_EQ(run_profile(collective_profile("all_reduce", "1.5MB")), 0) << logs();
  const json result = report();
  const auto flows = streams_of(result, "flow:");
  ASSERT_EQ(flows.size(), 3u) << result.dump(2);
  // Ring: each rank sends 2(G-1)/G * S = 4/3 * 1.5 MB = 2 MB per step to the next rank only.
  const double model = 2.0 * (3 - 1) / 3 * 1.5e6;
  const auto sent = sent_by_link(flows);
  const std::map<std::string, std::string> next{{"vm1", "vm2"}, {"vm2", "vm3"}, {"vm3", "vm1"}};
  for (const auto& [agent, peer] : next) {
    ASSERT_EQ(sent.at(agent).size(), 1u) << agent << " talks to its ring neighbour only";
    EXPECT_NEAR(sent.at(agent).at(peer) / kCollectiveSteps, model, 0.02 * model) << agent << " -> " << peer;
  }
  for (const auto& flow : flows) {
    EXPECT_EQ(counter(flow, "steps_done"), std::uint64_t{kCollectiveSteps}) << flow.dump(2);
    // The rhythm: seconds with traffic and silent seconds (compute) alternate in the series.
    std::size_t busy = 0, silent = 0;
    for (const double rate : bin_throughputs(flow)) (rate > 0 ? busy : silent) += 1;
    EXPECT_GE(busy, std::size_t{kCollectiveSteps}) << flow.dump(2);
    EXPECT_GE(silent, std::size_t{kCollectiveSteps}) << flow.dump(2);
  }
  const auto& collective = result["tests"][0]["collective"];
  EXPECT_EQ(collective["ranks"], 3);
  EXPECT_GT(collective["busbw_bytes_per_s"].get<double>(), 0);
  EXPECT_NEAR(collective["busbw_bytes_per_s"].get<double>(), collective["algbw_bytes_per_s"].get<double>() * 4 / 3, 1);
  EXPECT_FALSE(collective["slowest_rank"].get<std::string>().empty());
  EXPECT_FALSE(result["tests"][0]["start_skew_ns"].is_null());
}

TEST_F(TrainingVmLab, AllToAllSendsSOverGToEveryOtherRankEachStep) {
  ASSERT_EQ(run_profile(collective_profile("all_to_all", "3MB")), 0) << logs();
  const json result = report();
  const auto flows = streams_of(result, "flow:");
  ASSERT_EQ(flows.size(), 6u) << "every rank to every other rank";
  // All-to-all: S/G = 1 MB to each of the G-1 others, (G-1)/G * S = 2 MB per rank and step.
  const double per_peer = 3e6 / 3;
  for (const auto& [agent, peers] : sent_by_link(flows)) {
    ASSERT_EQ(peers.size(), 2u) << agent;
    double total = 0;
    for (const auto& [peer, bytes] : peers) {
      EXPECT_NEAR(bytes / kCollectiveSteps, per_peer, 0.02 * per_peer) << agent << " -> " << peer;
      total += bytes / kCollectiveSteps;
    }
    EXPECT_NEAR(total, 2.0 / 3 * 3e6, 0.02 * 2e6) << agent;
  }
  EXPECT_GT(result["tests"][0]["collective"]["busbw_bytes_per_s"].get<double>(), 0);
}

}  // namespace
}  // namespace tusk::testing

namespace tusk::testing {
namespace {

// Rails: two VMs joined by two links, each VM's NIC i on rail i (rxe0, rxe1), as a GPU host's NIC i
// talks to NIC i of the others. A ring all-reduce replayed rail-aligned runs one ring per rail:
// every NIC carries its own rank's 2(G-1)/G * S = S per step (G = 2), through its own device only,
// and the collective report has one rank per NIC, each within 2 % of the model.
TEST_F(RailsVmLab, ARailAlignedAllReduceSendsTheModelsBytesThroughEachNic) {
  ASSERT_EQ(run_profile(collective_profile("all_reduce", "1.5MB", "[vm1, vm2]", "    rails: 2\n")), 0) << logs();
  const json result = report();
  const double model = 1.5e6;  // 2(G-1)/G * S with G = 2
  const auto flows = streams_of(result, "flow:");
  ASSERT_EQ(flows.size(), 4u) << "one flow per rail from each VM:\n" << result.dump(2);
  for (const auto& flow : flows) {
    const std::string id = flow["stream_id"];
    const std::string rail = id.find("/rail1/") != std::string::npos ? "1" : "0";
    EXPECT_NE(id.find("/rail" + rail + "/qp0"), std::string::npos) << id;
    // Rail-aligned: rail r leaves through the VM's rxeR, and the NIC's traffic is that rail's.
    EXPECT_EQ(flow["nic"], "rxe" + rail + "/1") << flow.dump(2);
    EXPECT_EQ(counter(flow, "steps_done"), std::uint64_t{kCollectiveSteps}) << flow.dump(2);
    EXPECT_NEAR(static_cast<double>(counter(flow, "tx_bytes")) / kCollectiveSteps, model, 0.02 * model) << flow.dump(2);
  }
  for (const auto& sink : streams_of(result, "sink:")) {
    const std::string id = sink["stream_id"];
    EXPECT_EQ(sink["nic"], std::string("rxe") + (id.find("/rail1/") != std::string::npos ? "1" : "0") + "/1")
        << sink.dump(2);
  }
  const auto& collective = result["tests"][0]["collective"];
  EXPECT_EQ(collective["rails"], 2);
  ASSERT_EQ(collective["per_rank"].size(), 4u) << "a rank per NIC:\n" << collective.dump(2);
  std::set<std::string> nics;
  for (const auto& rank : collective["per_rank"]) {
    nics.insert(rank["agent"].get<std::string>() + " " + rank["nic"].get<std::string>());
    EXPECT_DOUBLE_EQ(rank["model_bytes_per_step"].get<double>(), model) << rank.dump(2);
    EXPECT_NEAR(rank["bytes_per_step"].get<double>(), model, 0.02 * model) << rank.dump(2);
  }
  EXPECT_EQ(nics, (std::set<std::string>{"vm1 rxe0/1", "vm1 rxe1/1", "vm2 rxe0/1", "vm2 rxe1/1"}));
  // Each VM reports both NIC ports, each with its peer.
  std::set<std::string> ports;
  for (const auto& nic : streams_of(result, "nic:"))
    ports.insert(nic["agent"].get<std::string>() + " " + nic["stream_id"].get<std::string>());
  EXPECT_EQ(ports, (std::set<std::string>{"vm1 nic:rxe0/1", "vm1 nic:rxe1/1", "vm2 nic:rxe0/1", "vm2 nic:rxe1/1"}));
}

}  // namespace
}  // namespace tusk::testing
