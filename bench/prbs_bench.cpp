// PRBS generator and checker throughput against memcpy and memcmp, measured in the same run on the
// same buffers, single-threaded, so the GB/s are per core. The project's goal is a checker at
// least half as fast as memcmp. Prints only; asserts nothing.
//
//   prbs_bench [--seconds N]   (N seconds per row, default 1)

#include "agent/payload/prbs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using tusk::payload::Pattern;

constexpr std::size_t kBufferBytes = 8 << 20;
// One standard-MTU payload per call: frame by frame, each call pays its own set-up.
constexpr std::size_t kFrameBytes = 1500;

volatile std::uint64_t g_sink;

// Makes the compiler assume the memory behind p is read and written here, so that no copy or
// comparison can be dropped as unused.
inline void escape(const void* p) {
  __asm__ __volatile__("" : : "r"(p) : "memory");
}

// Calls op() until `seconds` have passed (after one untimed warm-up call) and returns GB/s, where
// each call processes `bytes` bytes: the best of kSlices equal slices, because on a shared machine
// the other load only ever slows a slice down, and the ratios should compare the code, not the load.
template <class Op>
double rate(double seconds, std::size_t bytes, Op op) {
  using Clock = std::chrono::steady_clock;
  constexpr int kSlices = 20;
  g_sink = g_sink + op();
  const auto slice = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds / kSlices));
  std::uint64_t sink = 0;
  double best = 0;
  for (int s = 0; s < kSlices; ++s) {
    std::uint64_t calls = 0;
    const auto start = Clock::now();
    auto now = start;
    do {
      sink += op();
      ++calls;
      now = Clock::now();
    } while (now < start + slice);
    const double elapsed = std::chrono::duration<double>(now - start).count();
    best = std::max(best, static_cast<double>(calls) * static_cast<double>(bytes) / elapsed / 1e9);
  }
  g_sink = g_sink + sink;
  return best;
}

double parse_seconds(int argc, char** argv) {
  double seconds = 1.0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      char* end = nullptr;
      seconds = std::strtod(argv[++i], &end);
      if (end == argv[i] || *end != '\0' || !(seconds > 0)) {
        fmt::print(stderr, "prbs_bench: --seconds wants a positive number, not '{}'\n", argv[i]);
        std::exit(2);
      }
    } else {
      fmt::print(stderr, "usage: prbs_bench [--seconds N]\n");
      std::exit(2);
    }
  }
  return seconds;
}

struct Row {
  std::string what;
  double gbps;
  std::string ratio;  // empty for the references
};

}  // namespace

int main(int argc, char** argv) {
  const double seconds = parse_seconds(argc, argv);

  std::vector<std::uint8_t> src(kBufferBytes);
  std::vector<std::uint8_t> dst(kBufferBytes, 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 131 + (i >> 12));
  const std::vector<std::uint8_t> same = src;

  std::vector<Row> rows;
  std::uint64_t check_errors = 0;  // all buffers are clean, so anything here is a bug

  const double memcpy_gbps = rate(seconds, kBufferBytes, [&] {
    std::memcpy(dst.data(), src.data(), kBufferBytes);
    escape(dst.data());
    return std::uint64_t{dst[kBufferBytes / 2]};
  });
  rows.push_back({"memcpy", memcpy_gbps, ""});

  const double memcmp_gbps = rate(seconds, kBufferBytes, [&] {
    escape(src.data());
    escape(same.data());
    return static_cast<std::uint64_t>(std::memcmp(src.data(), same.data(), kBufferBytes) != 0);
  });
  rows.push_back({"memcmp (equal buffers)", memcmp_gbps, ""});

  for (Pattern pattern : {Pattern::Prbs31, Pattern::Prbs23, Pattern::Prbs7}) {
    const auto name = tusk::payload::name_of(pattern);
    const std::uint32_t start = tusk::payload::default_state(pattern);

    tusk::payload::PrbsGenerator gen(pattern, false, start);
    const double fill_gbps = rate(seconds, kBufferBytes, [&] {
      gen.fill(dst.data(), kBufferBytes);
      escape(dst.data());
      return std::uint64_t{dst[kBufferBytes - 1]};
    });
    rows.push_back({fmt::format("{} fill", name), fill_gbps, fmt::format("{:.2f}x memcpy", fill_gbps / memcpy_gbps)});

    tusk::payload::fill_pattern(pattern, false, start, dst.data(), kBufferBytes);
    const double check_gbps = rate(seconds, kBufferBytes, [&] {
      escape(dst.data());
      const std::uint64_t errors = tusk::payload::count_bit_errors(pattern, false, start, dst.data(), kBufferBytes);
      check_errors += errors;
      return errors;
    });
    rows.push_back(
        {fmt::format("{} check", name), check_gbps, fmt::format("{:.2f}x memcmp", check_gbps / memcmp_gbps)});
  }

  // Frame by frame. The DPDK TX datapath fills each frame from one generator that runs on across
  // frames (every frame's header says where its payload starts), so a frame costs a copy from the
  // generator's 16 KiB buffer; the receiver checks each frame from the start state its header
  // carries. The fill from a fresh state per frame (what a sender without the running generator
  // would pay) is shown beside it.
  {
    const Pattern pattern = Pattern::Prbs31;
    const std::size_t frames = kBufferBytes / kFrameBytes;
    const std::size_t bytes = frames * kFrameBytes;
    std::vector<std::uint32_t> states(frames);
    tusk::payload::PrbsGenerator gen(pattern, true, tusk::payload::default_state(pattern));
    for (std::size_t f = 0; f < frames; ++f) {
      states[f] = gen.state();
      gen.fill(dst.data() + f * kFrameBytes, kFrameBytes);
    }
    tusk::payload::PrbsGenerator running(pattern, true, tusk::payload::default_state(pattern));
    const double running_gbps = rate(seconds, bytes, [&] {
      for (std::size_t f = 0; f < frames; ++f) running.fill(dst.data() + f * kFrameBytes, kFrameBytes);
      escape(dst.data());
      return std::uint64_t{dst[0]};
    });
    rows.push_back({fmt::format("prbs31 fill, {} B frames", kFrameBytes), running_gbps,
                    fmt::format("{:.2f}x memcpy", running_gbps / memcpy_gbps)});
    const double fill_gbps = rate(seconds, bytes, [&] {
      for (std::size_t f = 0; f < frames; ++f) {
        tusk::payload::fill_pattern(pattern, true, states[f], dst.data() + f * kFrameBytes, kFrameBytes);
      }
      escape(dst.data());
      return std::uint64_t{dst[0]};
    });
    rows.push_back({fmt::format("  (from a fresh state each)"), fill_gbps,
                    fmt::format("{:.2f}x memcpy", fill_gbps / memcpy_gbps)});
    const double check_gbps = rate(seconds, bytes, [&] {
      escape(dst.data());
      std::uint64_t errors = 0;
      for (std::size_t f = 0; f < frames; ++f) {
        errors += tusk::payload::count_bit_errors(pattern, true, states[f], dst.data() + f * kFrameBytes, kFrameBytes);
      }
      check_errors += errors;
      return errors;
    });
    rows.push_back({fmt::format("prbs31 check, {} B frames", kFrameBytes), check_gbps,
                    fmt::format("{:.2f}x memcmp", check_gbps / memcmp_gbps)});
  }

  fmt::print("PRBS throughput, one core, {} MiB buffer, {:g} s per row\n\n", kBufferBytes >> 20, seconds);
  fmt::print("{:<30} {:>10}  {}\n", "operation", "GB/s", "ratio");
  fmt::print("{:-<30} {:->10}  {:-<14}\n", "", "", "");
  for (const Row& row : rows) fmt::print("{:<30} {:>10.2f}  {}\n", row.what, row.gbps, row.ratio);
  fmt::print(
      "\nGB/s count the bytes of one buffer (memcmp reads two). Goal: fill >= 0.5x memcpy and check >= 0.5x "
      "memcmp, frame by frame.\n");
  if (check_errors != 0) fmt::print("WARNING: the checker counted {} bit errors on clean data\n", check_errors);
  return 0;
}
