// How many cores a port needs at line rate for Tusk's own per-frame and per-message work, from
// the rates measured on this core in this run: the DPDK sender (IPv4/UDP headers written, PRBS-31
// payload filled from the running generator) and receiver (headers parsed, payload checked from
// the state its header carries), per frame size; the RDMA receiver's check (header, sequence and
// payload CRC-32C) per message size. The PMD's own rx/tx work and the RDMA posting (a NIC's) come
// on top and are not measured here. Prints only; asserts nothing.
//
//   cores_per_port [--runs R]   (the median of R runs of each measurement, default 3)
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "agent/dpdk/frame_format.hpp"
#include "agent/payload/prbs.hpp"
#include "agent/rdma/message_format.hpp"
#include "bench/bench_rate.hpp"

namespace {

using tusk::bench::escape;
using tusk::bench::median;

using tusk::dpdk::FrameSpec;
using tusk::dpdk::ParsedFrame;
using tusk::dpdk::TuskHeader;
using tusk::payload::Pattern;

// Frames and messages are spread over this much memory, as a mempool's or a QP's buffers are, so
// the data comes from the caches a NIC's DMA leaves it in, not from one hot buffer.
constexpr std::size_t kRingBytes = 8 << 20;
constexpr double kPortsGbps[] = {100, 200, 400};
// Preamble, start delimiter and the gap between frames: what a frame costs on the wire beyond
// its own bytes.
constexpr double kWireOverheadBytes = 20;

// ns per call of op(i), from passes over all `count` items: the best of bench::rate's slices of
// a tenth of a second, as the other per-core benches time theirs.
template <class Op>
double ns_per_item(std::size_t count, Op op) {
  const double items_per_ns = tusk::bench::rate(
      0.1, count,
      [&] {
        std::uint64_t sink = 0;
        for (std::size_t i = 0; i < count; ++i) sink += op(i);
        return sink;
      },
      5);
  return 1 / items_per_ns;
}

FrameSpec routed_spec() {
  FrameSpec spec;
  spec.dst = {0x02, 0, 0, 0, 0, 2};
  spec.src = {0x02, 0, 0, 0, 0, 1};
  spec.encapsulation = tusk::dpdk::Encapsulation::Ipv4Udp;
  spec.ip.src_address = 0xC0A8650B;
  spec.ip.dst_address = 0xC0A8660B;
  spec.ip.src_port = 49152;
  return spec;
}

struct FrameCost {
  double tx_ns, rx_ns;
};

FrameCost frame_cost(std::size_t frame_size) {
  const FrameSpec spec = routed_spec();
  const std::size_t count = kRingBytes / frame_size;
  std::vector<std::uint8_t> ring(count * frame_size);
  std::vector<std::uint32_t> states(count);
  const std::size_t payload = tusk::dpdk::payload_length_for(spec, frame_size);
  const std::size_t payload_at = frame_size - payload;
  tusk::payload::PrbsGenerator generator(Pattern::Prbs31, true, tusk::payload::default_state(Pattern::Prbs31));
  TuskHeader header;
  header.payload_length = static_cast<std::uint16_t>(payload);
  std::uint64_t seq = 0;
  const double tx = ns_per_item(count, [&](std::size_t i) {
    std::uint8_t* frame = ring.data() + i * frame_size;
    header.seq = seq++;
    header.prbs_state = states[i] = generator.state();
    tusk::dpdk::write_headers(spec, header, frame);
    generator.fill(frame + payload_at, payload);
    escape(frame);
    return std::uint64_t{frame[0]};
  });
  const auto match = tusk::dpdk::match_for(spec);
  std::uint64_t errors = 0;
  const double rx = ns_per_item(count, [&](std::size_t i) {
    ParsedFrame parsed;
    const std::uint8_t* frame = ring.data() + i * frame_size;
    if (tusk::dpdk::parse_headers(frame, frame_size, parsed, match) != tusk::dpdk::ParseStatus::Ok) return ++errors;
    const std::uint64_t bits = tusk::payload::count_bit_errors(Pattern::Prbs31, true, parsed.header.prbs_state,
                                                               parsed.payload, parsed.payload_length);
    errors += bits;
    return bits;
  });
  if (errors != 0) fmt::print(stderr, "cores_per_port: {} errors on clean {} B frames\n", errors, frame_size);
  return {tx, rx};
}

double message_check_ns(std::size_t message_size) {
  const std::size_t count = std::max<std::size_t>(2, kRingBytes / message_size);
  std::vector<std::uint8_t> ring(count * message_size);
  for (std::size_t m = 0; m < count; ++m) {
    std::uint8_t* message = ring.data() + m * message_size;
    const std::uint32_t crc = tusk::rdma::fill_message_payload(message, message_size);
    tusk::rdma::write_message_header(message, {1, m, static_cast<std::uint32_t>(message_size), crc});
  }
  std::uint64_t bad = 0;
  const double ns = ns_per_item(count, [&](std::size_t m) {
    const auto check = tusk::rdma::check_message(ring.data() + m * message_size, message_size, 1, m);
    bad += check != tusk::rdma::MessageCheck::Ok;
    return static_cast<std::uint64_t>(check);
  });
  if (bad != 0) fmt::print(stderr, "cores_per_port: {} clean {} B messages failed their check\n", bad, message_size);
  return ns;
}

int parse_runs(int argc, char** argv) {
  if (argc == 1) return 3;
  const std::string_view flag = argv[1];
  char* end = nullptr;
  const long runs = argc == 3 && flag == "--runs" ? std::strtol(argv[2], &end, 10) : 0;
  if (end == nullptr || *end != '\0' || runs < 1 || runs > 99) {
    fmt::print(stderr, "usage: cores_per_port [--runs R]   (R: 1..99)\n");
    std::exit(2);
  }
  return static_cast<int>(runs);
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = parse_runs(argc, argv);
  fmt::print("Cores a port needs for Tusk's own work at line rate, one direction, from this core's rates\n");
  fmt::print("(the median of {} runs each; the PMD's rx/tx and the NIC's RDMA posting come on top)\n\n", runs);

  fmt::print("DPDK, IPv4/UDP frames with a PRBS-31 payload: sender = headers + fill, receiver = parse + check\n");
  fmt::print("{:>7} {:>9} {:>9} {:>8} {:>8}", "frame B", "tx ns", "rx ns", "tx Mfps", "rx Mfps");
  for (double gbps : kPortsGbps) fmt::print("  {:>3.0f}G tx/rx", gbps);
  fmt::print("\n");
  for (const std::size_t size : {std::size_t{128}, std::size_t{256}, std::size_t{512}, std::size_t{1500},
                                 std::size_t{4096}, std::size_t{9000}}) {
    std::vector<double> tx, rx;
    for (int r = 0; r < runs; ++r) {
      const FrameCost cost = frame_cost(size);
      tx.push_back(cost.tx_ns);
      rx.push_back(cost.rx_ns);
    }
    const double tx_ns = median(tx), rx_ns = median(rx);
    fmt::print("{:>7} {:>9.1f} {:>9.1f} {:>8.1f} {:>8.1f}", size, tx_ns, rx_ns, 1e3 / tx_ns, 1e3 / rx_ns);
    for (double gbps : kPortsGbps) {
      const double frames_per_ns = gbps / 8 / (static_cast<double>(size) + kWireOverheadBytes);
      fmt::print("  {:>4.2f}/{:<4.2f}", frames_per_ns * tx_ns, frames_per_ns * rx_ns);
    }
    fmt::print("\n");
  }

  fmt::print("\nRDMA receiver, checked messages (header, sequence, CRC-32C of the payload): check_every 1\n");
  fmt::print("{:>9} {:>11} {:>8}", "message B", "check ns", "GB/s");
  for (double gbps : kPortsGbps) fmt::print("  {:>5.0f}G", gbps);
  fmt::print("\n");
  for (const std::size_t size : {std::size_t{4096}, std::size_t{65536}, std::size_t{1} << 20, std::size_t{8} << 20}) {
    std::vector<double> ns;
    for (int r = 0; r < runs; ++r) ns.push_back(message_check_ns(size));
    const double check_ns = median(ns);
    const double gbytes_per_s = static_cast<double>(size) / check_ns;
    fmt::print("{:>9} {:>11.1f} {:>8.1f}", size, check_ns, gbytes_per_s);
    for (double gbps : kPortsGbps) fmt::print("  {:>6.2f}", gbps / 8 / gbytes_per_s);
    fmt::print("\n");
  }
  fmt::print(
      "\nCores: the share of one core the work takes at the port's line rate (frames counted with their 20 B of\n"
      "preamble and gap; RDMA as payload bytes, so slightly over). Above 1, spread the port over queues\n"
      "(--dpdk-queues) or, for RDMA, check a sample (check_every).\n");
  return 0;
}
