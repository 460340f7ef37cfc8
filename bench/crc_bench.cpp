// CRC-32C throughput per message size, one core, against memcpy of the same bytes in the same run:
// the check every RDMA message's payload gets. Rows: the portable table, one chain of SSE4.2 crc32
// instructions (the agent's only way before ISA-L), ISA-L's crc32_iscsi, and crc32c as the agent
// calls it (the chain below 256 B, ISA-L above). Prints only; asserts nothing.
//
//   crc_bench [--seconds N] [--runs R]   (N seconds per cell, default 0.2; the median of R runs, default 5)

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_rate.hpp"
#include "common/crc32c.hpp"

namespace {

using tusk::bench::escape;
using tusk::bench::median;
using tusk::bench::rate;

// Slices of each cell, the best taken; calls between clock reads.
constexpr int kSlices = 5;
constexpr int kBatch = 64;

struct Options {
  double seconds = 0.2;
  int runs = 5;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if ((arg == "--seconds" || arg == "--runs") && i + 1 < argc) {
      char* end = nullptr;
      const double v = std::strtod(argv[++i], &end);
      if (end == argv[i] || *end != '\0' || !(v > 0) || (arg == "--runs" && (v != static_cast<int>(v) || v > 99))) {
        fmt::print(stderr, "crc_bench: {} wants a positive number{}, not '{}'\n", arg,
                   arg == "--runs" ? " (a whole one, at most 99)" : "", argv[i]);
        std::exit(2);
      }
      if (arg == "--seconds") {
        o.seconds = v;
      } else {
        o.runs = static_cast<int>(v);
      }
    } else {
      fmt::print(stderr, "usage: crc_bench [--seconds N] [--runs R]\n");
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  // Sizes from a frame header to a large RDMA message; the buffer holds 32 MiB of messages so the
  // large ones come from memory as a NIC's would, not from a cache that holds one message.
  const std::vector<std::size_t> sizes{64, 256, 1500, 4096, 65536, 1 << 20, 8 << 20};
  constexpr std::size_t kBuffer = 32 << 20;
  std::vector<std::uint8_t> src(kBuffer), dst(kBuffer);
  for (std::size_t i = 0; i < kBuffer; ++i) src[i] = static_cast<std::uint8_t>(i * 131 + (i >> 12));

  fmt::print("CRC-32C, one core, GB/s (median of {} runs of {:g} s a cell); ratios in the same run\n\n", options.runs,
             options.seconds);
  fmt::print("{:>9} {:>8} {:>8} {:>8} {:>8} {:>8}  {:>12} {:>12}\n", "message", "memcpy", "table", "1 chain", "ISA-L",
             "crc32c", "crc32c/chain", "crc32c/memcpy");
  for (const std::size_t size : sizes) {
    const std::size_t count = kBuffer / size;
    std::size_t at = 0;
    // Each call takes the next message of the buffer, round and round.
    const auto next = [&] {
      const std::size_t offset = at * size;
      at = at + 1 == count ? 0 : at + 1;
      return offset;
    };
    std::vector<double> copy, table, chain, isal, agent;
    for (int run = 0; run < options.runs; ++run) {
      copy.push_back(rate(
          options.seconds, size,
          [&] {
            const std::size_t o = next();
            std::memcpy(dst.data() + o, src.data() + o, size);
            escape(dst.data());
            return std::uint64_t{dst[o]};
          },
          kSlices, kBatch));
      const auto of = [&](auto way) {
        return rate(
            options.seconds, size,
            [&] {
              escape(src.data());
              return std::uint64_t{way(src.data() + next(), size)};
            },
            kSlices, kBatch);
      };
      if (size <= (1 << 20)) table.push_back(of(tusk::crc32c_ways::table));
      chain.push_back(of(tusk::crc32c_ways::one_chain));
      isal.push_back(of(tusk::crc32c_ways::isal));
      agent.push_back(of(tusk::crc32c));
    }
    const double m_copy = median(copy), m_chain = median(chain), m_agent = median(agent);
    fmt::print("{:>9} {:>8.2f} {:>8} {:>8.2f} {:>8.2f} {:>8.2f}  {:>11.2f}x {:>12.2f}x\n", size, m_copy,
               table.empty() ? std::string("-") : fmt::format("{:.2f}", median(table)), m_chain, median(isal), m_agent,
               m_agent / m_chain, m_agent / m_copy);
  }
  fmt::print(
      "\nGoal (issue 61): crc32c >= 3x one chain and >= 0.9x memcpy on 64 KiB - 8 MiB messages. memcpy reads and "
      "writes each byte; a CRC only reads it.\n");
  return 0;
}
