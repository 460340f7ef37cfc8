// What the per-core benches (prbs_bench, crc_bench, cores_per_port) time their loops with.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tusk::bench {

inline volatile std::uint64_t g_sink;

// Makes the compiler assume the memory behind p is read and written here, so that no copy or
// comparison can be dropped as unused.
inline void escape(const void* p) {
  __asm__ __volatile__("" : : "r"(p) : "memory");
}

// Calls op() until `seconds` have passed (after one untimed warm-up call) and returns GB/s, where
// each call processes `bytes` bytes: the best of `slices` equal slices, because on a shared machine
// the other load only ever slows a slice down, and the ratios should compare the code, not the
// load. `batch` calls run between clock reads (a read costs as much as a small message's work).
template <class Op>
double rate(double seconds, std::size_t bytes, Op op, int slices = 20, int batch = 1) {
  using Clock = std::chrono::steady_clock;
  g_sink = g_sink + op();
  const auto slice = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds / slices));
  std::uint64_t sink = 0;
  double best = 0;
  for (int s = 0; s < slices; ++s) {
    std::uint64_t calls = 0;
    const auto start = Clock::now();
    auto now = start;
    do {
      for (int i = 0; i < batch; ++i) sink += op();
      calls += static_cast<std::uint64_t>(batch);
      now = Clock::now();
    } while (now < start + slice);
    const double elapsed = std::chrono::duration<double>(now - start).count();
    best = std::max(best, static_cast<double>(calls) * static_cast<double>(bytes) / elapsed / 1e9);
  }
  g_sink = g_sink + sink;
  return best;
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace tusk::bench
