// TX rate of Tusk's DPDK engine on one port, filling every frame with PRBS-31: frames per second
// over a fixed time. bench/tx_vs_testpmd.sh runs it back to back with dpdk-testpmd txonly on the
// same port and prints the ratio; bench/tx_ipv4_vs_ethernet.sh runs it with both encapsulations.
// Prints only; asserts nothing.
//
//   dpdk_tx_bench VDEV SECONDS FRAME_SIZE [ethernet|ipv4_udp [FLOWS [QUEUES]]]
//                                          e.g. dpdk_tx_bench net_af_packet0,iface=veth0 5 128
// Frames go to a peer whose MAC nobody has (the veth's far end drops them). ipv4_udp frames go
// from 10.99.0.1 to it at 10.99.0.2 on the same subnet (so nothing is resolved), in FLOWS flows
// (default 8) of their own UDP source ports, as a routed test sends them, over QUEUES TX queues
// (default 1; bench/dpdk_queue_scaling.sh compares 1 and 2), each with its own thread.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "agent/dpdk/dpdk_engine.hpp"
#include "agent/dpdk/queue_plan.hpp"
#include "common/clock.hpp"
#include "common/rates.hpp"

int main(int argc, char** argv) {
  if (argc < 4 || argc > 7) {
    std::fprintf(stderr, "usage: %s VDEV SECONDS FRAME_SIZE [ethernet|ipv4_udp [FLOWS [QUEUES]]]\n", argv[0]);
    return 2;
  }
  const std::string encapsulation = argc >= 5 ? argv[4] : "ethernet";
  const auto flows = static_cast<std::uint32_t>(argc >= 6 ? std::atoi(argv[5]) : 8);
  const auto queues = static_cast<std::uint16_t>(argc == 7 ? std::atoi(argv[6]) : 1);
  if (encapsulation != "ethernet" && encapsulation != "ipv4_udp") {
    std::fprintf(stderr, "encapsulation is ethernet or ipv4_udp, not '%s'\n", encapsulation.c_str());
    return 2;
  }
  const std::string vdev = argv[1];
  const double seconds = std::atof(argv[2]);
  const auto frame_size = static_cast<std::uint32_t>(std::atoi(argv[3]));

  tusk::dpdk::DpdkAgentOptions options;
  options.eal.vdevs = {tusk::dpdk::vdev_for_queues(vdev, queues)};
  options.queues = queues;
  // Two CPUs pin one queue's threads, as an agent with --dpdk-lcores 0-1 does. Given QUEUES (the
  // scaling bench), every run floats instead, 1 queue as 2: this 2-core lab cannot pin 2 queues'
  // four threads, and the plan lets threads that sleep when idle share.
  options.eal.lcores = argc == 7 ? "0" : "0-1";
  options.eal.file_prefix = "tusk-bench";
  options.ports = {vdev.substr(0, vdev.find(','))};
  if (encapsulation == "ipv4_udp") options.addresses = {tusk::dpdk::parse_ipv4_interface("10.99.0.1/24")};
  // Nothing comes back in a TX benchmark: let the receive thread sleep rather than take a core
  // from the kernel's transmit path (testpmd's txonly has no receiver either). On this 2-core lab
  // a 50 us sleep still cost about a tenth of the TX rate through wake-ups.
  options.idle_sleep_us = 1000;
  tusk::dpdk::DpdkContext context(options);
  tusk::dpdk::DpdkEngine engine(context);

  tusk::proto::Plan plan;
  plan.set_engine("dpdk");
  plan.mutable_dpdk()->set_frame_size(frame_size);
  plan.mutable_dpdk()->set_pattern("prbs31");
  auto& sink = *plan.mutable_peers()->Add();
  sink.set_agent_name("sink");
  sink.set_address("02:00:00:00:00:02");
  if (encapsulation == "ipv4_udp") {
    plan.mutable_dpdk()->set_encapsulation("ipv4_udp");
    plan.mutable_dpdk()->set_flows_per_peer(flows);
    plan.mutable_dpdk()->set_udp_source_port(49152);
    sink.set_ipv4("10.99.0.2");
  }
  engine.prepare(plan, nullptr);
  const std::int64_t start = tusk::realtime_ns();
  engine.start(start);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  std::uint64_t frames = 0;
  for (const auto& stream : engine.sample()) {
    if (stream.kind() == "tx") frames += stream.counters().at("tx_frames");
  }
  const double elapsed = (tusk::realtime_ns() - start) / 1e9;
  engine.stop();
  std::printf("tusk tx (%s, %u queue%s): %llu frames of %u B in %.2f s = %.0f pps (%.3f Gbit/s)\n",
              encapsulation.c_str(), unsigned{queues}, queues == 1 ? "" : "s", static_cast<unsigned long long>(frames),
              frame_size, elapsed, frames / elapsed, tusk::bit_rate_of(frames / elapsed, frame_size) / 1e9);
  return 0;
}
