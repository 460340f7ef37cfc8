// RDMA WRITE throughput of Tusk's RDMA engine between two hosts, without the controller:
// bench/rdma_vs_perftest.sh runs it back to back with ib_write_bw on the same pair (the
// Soft-RoCE VM lab) and prints the ratio. Prints only; asserts nothing.
//
//   rdma_write_bench receive SECONDS QPS [IDLE_SLEEP_US] take writes from `send`'s QPS QPs for SECONDS
//   rdma_write_bench send PEER_IP SECONDS SIZE QPS DEPTH [IDLE_SLEEP_US]
//                                                        write to PEER_IP; prints the steady rate
//   rdma_write_bench meter INTERFACE SECONDS             prints "SECONDS.NANOS TX_BYTES" of
//                                                        INTERFACE every 100 ms, for the bench's meter
// The meter is one process that reads a sysfs file: a shell loop of date and cat, forking under
// TCG beside a busy-polling tool, managed one reading every 1.5-4 s.
// The receiver takes connections only from a sender of its plan, as an agent's engine does: the
// sender here is named "send", and makes QPS QPs.
// IDLE_SLEEP_US is the agent's --idle-sleep-us (default 0, busy polling).
//
// Settings follow ib_write_bw's defaults where it has one: DEPTH writes in flight per QP (its
// --tx-depth, 128), a completion every 100 (its --cq-mod), no data check, ACK timeout 2^18 x
// 4.096 us (run perftest with -u 18 to match).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "agent/rdma/rdma_engine.hpp"
#include "common/clock.hpp"
#include "common/rates.hpp"

namespace {

std::uint64_t sent_bytes(tusk::rdma::RdmaEngine& engine) {
  std::uint64_t bytes = 0;
  for (const auto& stream : engine.sample()) {
    if (stream.kind() == "flow") bytes += stream.counters().at("tx_bytes");
  }
  return bytes;
}

int usage(const char* self) {
  std::fprintf(stderr,
               "usage: %s receive SECONDS QPS [IDLE_SLEEP_US] | send PEER_IP SECONDS SIZE QPS DEPTH [IDLE_SLEEP_US] | "
               "meter INTERFACE SECONDS\n",
               self);
  return 2;
}

}  // namespace

int meter(const std::string& interface, double seconds) {
  const std::string path = "/sys/class/net/" + interface + "/statistics/tx_bytes";
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream file(path);
    unsigned long long bytes = 0;
    if (!(file >> bytes)) {
      std::fprintf(stderr, "meter: cannot read %s\n", path.c_str());
      return 1;
    }
    const std::int64_t now = tusk::realtime_ns();
    std::printf("%lld.%09lld %llu\n", static_cast<long long>(now / 1'000'000'000),
                static_cast<long long>(now % 1'000'000'000), bytes);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) return usage(argv[0]);
  const std::string role = argv[1];
  if (role == "meter") return argc == 4 ? meter(argv[2], std::atof(argv[3])) : usage(argv[0]);
  tusk::proto::Plan plan;
  plan.set_engine("rdma");
  auto& test = *plan.mutable_rdma();
  test.set_operation("write");
  test.set_ack_timeout(18);
  test.set_data_check(false);
  const bool receive = role == "receive" && (argc == 4 || argc == 5);
  const bool send = role == "send" && (argc == 7 || argc == 8);
  if (!receive && !send) return usage(argv[0]);
  const int idle_sleep_arg = receive ? 4 : 7;
  const auto idle_sleep_us = static_cast<unsigned>(argc > idle_sleep_arg ? std::atoi(argv[idle_sleep_arg]) : 0);
  tusk::rdma::RdmaEngine engine(role, idle_sleep_us);
  if (receive) {
    test.set_message_size(65536);
    test.set_qps_per_peer(static_cast<std::uint32_t>(std::atoi(argv[3])));
    plan.add_senders()->set_agent_name("send");
    engine.prepare(plan, nullptr);
    engine.start(tusk::realtime_ns());
    std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(argv[2])));
    engine.stop();
    return 0;
  }
  const double seconds = std::atof(argv[3]);
  test.set_message_size(std::strtoull(argv[4], nullptr, 10));
  test.set_qps_per_peer(static_cast<std::uint32_t>(std::atoi(argv[5])));
  test.set_outstanding(static_cast<std::uint32_t>(std::atoi(argv[6])));
  test.set_signal_every(std::min<std::uint32_t>(100, test.outstanding()));
  auto* peer = plan.add_peers();
  peer->set_agent_name("receiver");
  peer->set_address(argv[2]);
  engine.prepare(plan, [](tusk::proto::AgentEvent::Kind, const std::string& message, const std::string&) {
    std::fprintf(stderr, "event: %s\n", message.c_str());
  });
  // As the agent does: start only once the QPs are connected, so posting begins at the start.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!engine.ready() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  engine.start(tusk::realtime_ns());
  // Steady state only: wait until bytes move, skip one more second, then measure.
  while (sent_bytes(engine) == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const std::uint64_t before = sent_bytes(engine);
  const std::int64_t begin = tusk::realtime_ns();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const std::uint64_t after = sent_bytes(engine);
  const double elapsed = (tusk::realtime_ns() - begin) / 1e9;
  engine.stop();
  std::printf("tusk rdma write: %llu bytes in %.2f s = %.4f Gbit/s\n", static_cast<unsigned long long>(after - before),
              elapsed, tusk::throughput_bps(static_cast<double>(after - before), elapsed) / 1e9);
  return after > before ? 0 : 1;
}
