// What the IPv4/UDP encapsulation costs per frame on the datapath: writing and parsing the headers
// of ipv4_udp frames against ethernet frames (the reference), in the same run, on a ring of frame
// buffers as large as a TX burst's. Prints only; asserts nothing.
//
//   frame_header_bench [FRAMES]        default 20,000,000
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "agent/dpdk/frame_format.hpp"

namespace {
using tusk::dpdk::Encapsulation;
using tusk::dpdk::FrameSpec;
using tusk::dpdk::ParsedFrame;
using tusk::dpdk::TuskHeader;

constexpr std::size_t kFrameSize = 128;
constexpr std::size_t kRing = 64;

struct Timing {
  double write_ns = 0;
  double parse_ns = 0;
};

Timing measure(const FrameSpec& spec, std::size_t frames) {
  std::vector<std::uint8_t> ring(kRing * kFrameSize, 0);
  TuskHeader header;
  header.payload_length = static_cast<std::uint16_t>(tusk::dpdk::payload_length_for(spec, kFrameSize));
  const auto begin = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < frames; ++i) {
    header.seq = i;
    tusk::dpdk::write_headers(spec, header, ring.data() + (i % kRing) * kFrameSize);
  }
  const auto written = std::chrono::steady_clock::now();
  const auto match = tusk::dpdk::match_for(spec);
  std::uint64_t parsed_ok = 0;
  ParsedFrame parsed;
  for (std::size_t i = 0; i < frames; ++i) {
    parsed_ok += tusk::dpdk::parse_headers(ring.data() + (i % kRing) * kFrameSize, kFrameSize, parsed, match) ==
                 tusk::dpdk::ParseStatus::Ok;
  }
  const auto done = std::chrono::steady_clock::now();
  if (parsed_ok != frames)
    std::fprintf(stderr, "frame_header_bench: %llu frames did not parse\n",
                 static_cast<unsigned long long>(frames - parsed_ok));
  return {std::chrono::duration<double, std::nano>(written - begin).count() / frames,
          std::chrono::duration<double, std::nano>(done - written).count() / frames};
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t frames = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 20'000'000;
  FrameSpec ethernet;
  ethernet.dst = {0x02, 0, 0, 0, 0, 2};
  ethernet.src = {0x02, 0, 0, 0, 0, 1};
  FrameSpec routed = ethernet;
  routed.encapsulation = Encapsulation::Ipv4Udp;
  routed.ip.src_address = 0xC0A8650B;  // 192.168.101.11
  routed.ip.dst_address = 0xC0A8660B;  // 192.168.102.11
  routed.ip.src_port = 49152;

  measure(ethernet, frames / 10);  // warm up
  const Timing reference = measure(ethernet, frames);
  const Timing ipv4 = measure(routed, frames);
  std::printf("frame_header_bench: %zu frames of %zu B\n", frames, kFrameSize);
  std::printf("  write headers   ethernet %6.2f ns/frame   ipv4_udp %6.2f ns/frame   ratio %.2f\n", reference.write_ns,
              ipv4.write_ns, ipv4.write_ns / reference.write_ns);
  std::printf("  parse headers   ethernet %6.2f ns/frame   ipv4_udp %6.2f ns/frame   ratio %.2f\n", reference.parse_ns,
              ipv4.parse_ns, ipv4.parse_ns / reference.parse_ns);
  return 0;
}
