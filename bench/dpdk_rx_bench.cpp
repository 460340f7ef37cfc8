// RX rate of Tusk's DPDK engine on one port over QUEUES RX queues, each with its own thread, every
// frame and bit checked as in a test: the frames dpdk_tx_bench sends as ipv4_udp (to 10.99.0.2 in
// 8 flows) counted over a window after a warm-up, with the host drops beside them.
// bench/dpdk_queue_scaling.sh runs it with 1 and 2 queues. Prints only; asserts nothing.
//
//   dpdk_rx_bench VDEV SECONDS QUEUES      e.g. dpdk_rx_bench net_af_packet0,iface=veth1 5 2
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "agent/dpdk/dpdk_engine.hpp"
#include "agent/dpdk/queue_plan.hpp"
#include "common/clock.hpp"
#include "common/counter_names.hpp"

namespace {

struct Received {
  std::uint64_t frames = 0, host_drops = 0, lost = 0, bit_errors = 0;
};

Received received(tusk::dpdk::DpdkEngine& engine) {
  namespace c = tusk::counters;
  Received total;
  for (const auto& stream : engine.sample()) {
    if (stream.kind() != "rx") continue;
    const auto& counters = stream.counters();
    total.frames += counters.at(std::string(c::kRxFrames));
    total.lost += counters.at(std::string(c::kLostFrames));
    total.bit_errors += counters.at(std::string(c::kBitErrors));
    total.host_drops = counters.at(std::string(c::kHostDrops));  // the port's, on every stream
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s VDEV SECONDS QUEUES\n", argv[0]);
    return 2;
  }
  const std::string vdev = argv[1];
  const double seconds = std::atof(argv[2]);
  const auto queues = static_cast<std::uint16_t>(std::atoi(argv[3]));

  tusk::dpdk::DpdkAgentOptions options;
  options.eal.vdevs = {tusk::dpdk::vdev_for_queues(vdev, queues)};
  options.eal.lcores = "0";  // threads float, as dpdk_tx_bench's do beside it on a 2-core lab
  options.eal.file_prefix = "tusk-rx-bench";
  options.queues = queues;
  options.ports = {vdev.substr(0, vdev.find(','))};
  options.addresses = {tusk::dpdk::parse_ipv4_interface("10.99.0.2/24")};
  options.idle_sleep_us = 50;
  tusk::dpdk::DpdkContext context(options);
  tusk::dpdk::DpdkEngine engine(context);

  tusk::proto::Plan plan;
  plan.set_engine("dpdk");
  plan.set_duration_ms(static_cast<std::uint32_t>((seconds + 10) * 1000));
  plan.mutable_dpdk()->set_frame_size(1500);  // receives any size; a plan names one
  plan.mutable_dpdk()->set_pattern("prbs31");
  plan.mutable_dpdk()->set_encapsulation("ipv4_udp");
  engine.prepare(plan, nullptr);
  engine.start(tusk::realtime_ns());
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the sender's warm-up
  const Received before = received(engine);
  const std::int64_t begin = tusk::realtime_ns();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const Received after = received(engine);
  const double elapsed = (tusk::realtime_ns() - begin) / 1e9;
  engine.stop();
  std::printf("tusk rx (%u queue%s): %.0f pps checked, %.0f host drops/s, %llu lost, %llu bit errors\n",
              unsigned{queues}, queues == 1 ? "" : "s", (after.frames - before.frames) / elapsed,
              (after.host_drops - before.host_drops) / elapsed, static_cast<unsigned long long>(after.lost),
              static_cast<unsigned long long>(after.bit_errors));
  return 0;
}
