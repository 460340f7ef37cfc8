// PRBS generator and checker throughput against memcpy and memcmp, measured in the same run on the
// same buffers, single-threaded, so the GB/s are per core. The goal (issue 61): fill at least as
// fast as memcpy and check at least as fast as memcmp on 1500 B frames. Prints only; asserts nothing.
//
//   prbs_bench [--seconds N] [--runs R]   (N seconds per row, default 0.3; R runs, default 5, medians)

#include "agent/payload/prbs.hpp"
#include "bench/bench_rate.hpp"

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

using tusk::bench::escape;
using tusk::bench::rate;

using tusk::payload::Pattern;

constexpr std::size_t kBufferBytes = 8 << 20;
// One standard-MTU payload per call: frame by frame, each call pays its own set-up.
constexpr std::size_t kFrameBytes = 1500;

struct Options {
  double seconds = 0.3;
  int runs = 5;
};

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if ((arg == "--seconds" || arg == "--runs") && i + 1 < argc) {
      char* end = nullptr;
      const double value = std::strtod(argv[++i], &end);
      const bool whole = value == static_cast<double>(static_cast<int>(value)) && value <= 99;
      if (end == argv[i] || *end != '\0' || !(value > 0) || (arg == "--runs" && !whole)) {
        fmt::print(stderr, "prbs_bench: {} wants a positive number{}, not '{}'\n", arg,
                   arg == "--runs" ? " (a whole one, at most 99)" : "", argv[i]);
        std::exit(2);
      }
      if (arg == "--seconds") {
        options.seconds = value;
      } else {
        options.runs = static_cast<int>(value);
      }
    } else {
      fmt::print(stderr, "usage: prbs_bench [--seconds N] [--runs R]\n");
      std::exit(2);
    }
  }
  return options;
}

// A ratio to a reference measured in the same run.
struct Ratio {
  double value;
  std::string to;
};

struct Row {
  std::string what;
  double gbps;
  std::vector<Ratio> ratios;  // none for the references
};

// One run of every row. The references: memcpy and memcmp of the whole buffer, and of the same
// 1500 B frames the PRBS rows make and check (a frame's payload copied from a second buffer, and
// compared with it): what a sender and a receiver of a fixed payload would pay per frame.
std::vector<Row> one_run(double seconds, std::uint64_t& check_errors) {
  std::vector<std::uint8_t> src(kBufferBytes);
  std::vector<std::uint8_t> dst(kBufferBytes, 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 131 + (i >> 12));
  const std::vector<std::uint8_t> same = src;
  std::vector<Row> rows;

  const double memcpy_gbps = rate(seconds, kBufferBytes, [&] {
    std::memcpy(dst.data(), src.data(), kBufferBytes);
    escape(dst.data());
    return std::uint64_t{dst[kBufferBytes / 2]};
  });
  rows.push_back({"memcpy", memcpy_gbps, {}});

  const double memcmp_gbps = rate(seconds, kBufferBytes, [&] {
    escape(src.data());
    escape(same.data());
    return static_cast<std::uint64_t>(std::memcmp(src.data(), same.data(), kBufferBytes) != 0);
  });
  rows.push_back({"memcmp (equal buffers)", memcmp_gbps, {}});

  const std::size_t frames = kBufferBytes / kFrameBytes;
  const std::size_t frame_bytes = frames * kFrameBytes;
  const double memcpy_frames_gbps = rate(seconds, frame_bytes, [&] {
    for (std::size_t f = 0; f < frames; ++f) {
      std::memcpy(dst.data() + f * kFrameBytes, src.data() + f * kFrameBytes, kFrameBytes);
    }
    escape(dst.data());
    return std::uint64_t{dst[0]};
  });
  rows.push_back({fmt::format("memcpy, {} B frames", kFrameBytes), memcpy_frames_gbps, {}});
  const double memcmp_frames_gbps = rate(seconds, frame_bytes, [&] {
    escape(src.data());
    escape(same.data());
    std::uint64_t differ = 0;
    for (std::size_t f = 0; f < frames; ++f) {
      differ += std::memcmp(src.data() + f * kFrameBytes, same.data() + f * kFrameBytes, kFrameBytes) != 0;
    }
    return differ;
  });
  rows.push_back({fmt::format("memcmp, {} B frames", kFrameBytes), memcmp_frames_gbps, {}});

  for (Pattern pattern : {Pattern::Prbs31, Pattern::Prbs23, Pattern::Prbs7}) {
    const auto name = tusk::payload::name_of(pattern);
    const std::uint32_t start = tusk::payload::default_state(pattern);

    tusk::payload::PrbsGenerator gen(pattern, false, start);
    const double fill_gbps = rate(seconds, kBufferBytes, [&] {
      gen.fill(dst.data(), kBufferBytes);
      escape(dst.data());
      return std::uint64_t{dst[kBufferBytes - 1]};
    });
    rows.push_back({fmt::format("{} fill", name), fill_gbps, {{fill_gbps / memcpy_gbps, "memcpy"}}});

    tusk::payload::fill_pattern(pattern, false, start, dst.data(), kBufferBytes);
    const double check_gbps = rate(seconds, kBufferBytes, [&] {
      escape(dst.data());
      const std::uint64_t errors = tusk::payload::count_bit_errors(pattern, false, start, dst.data(), kBufferBytes);
      check_errors += errors;
      return errors;
    });
    rows.push_back({fmt::format("{} check", name), check_gbps, {{check_gbps / memcmp_gbps, "memcmp"}}});
  }

  // Frame by frame. The DPDK TX datapath fills each frame from one generator that runs on across
  // frames (every frame's header says where its payload starts); the receiver checks each frame
  // from the start state its header carries. The fill from a fresh state per frame (what a sender
  // without the running generator would pay) is shown beside it.
  const Pattern pattern = Pattern::Prbs31;
  std::vector<std::uint32_t> states(frames);
  tusk::payload::PrbsGenerator gen(pattern, true, tusk::payload::default_state(pattern));
  for (std::size_t f = 0; f < frames; ++f) {
    states[f] = gen.state();
    gen.fill(dst.data() + f * kFrameBytes, kFrameBytes);
  }
  tusk::payload::PrbsGenerator running(pattern, true, tusk::payload::default_state(pattern));
  const double running_gbps = rate(seconds, frame_bytes, [&] {
    for (std::size_t f = 0; f < frames; ++f) running.fill(dst.data() + f * kFrameBytes, kFrameBytes);
    escape(dst.data());
    return std::uint64_t{dst[0]};
  });
  rows.push_back(
      {fmt::format("prbs31 fill, {} B frames", kFrameBytes),
       running_gbps,
       {{running_gbps / memcpy_gbps, "memcpy"}, {running_gbps / memcpy_frames_gbps, "memcpy of the frames"}}});
  const double fresh_gbps = rate(seconds, frame_bytes, [&] {
    for (std::size_t f = 0; f < frames; ++f) {
      tusk::payload::fill_pattern(pattern, true, states[f], dst.data() + f * kFrameBytes, kFrameBytes);
    }
    escape(dst.data());
    return std::uint64_t{dst[0]};
  });
  rows.push_back({"  (from a fresh state each)", fresh_gbps, {{fresh_gbps / memcpy_gbps, "memcpy"}}});
  // The running fill above overwrote the frames: make them again for the check.
  tusk::payload::PrbsGenerator again(pattern, true, tusk::payload::default_state(pattern));
  for (std::size_t f = 0; f < frames; ++f) again.fill(dst.data() + f * kFrameBytes, kFrameBytes);
  const double frames_check_gbps = rate(seconds, frame_bytes, [&] {
    escape(dst.data());
    std::uint64_t errors = 0;
    for (std::size_t f = 0; f < frames; ++f) {
      errors += tusk::payload::count_bit_errors(pattern, true, states[f], dst.data() + f * kFrameBytes, kFrameBytes);
    }
    check_errors += errors;
    return errors;
  });
  rows.push_back({fmt::format("prbs31 check, {} B frames", kFrameBytes),
                  frames_check_gbps,
                  {{frames_check_gbps / memcmp_gbps, "memcmp"},
                   {frames_check_gbps / memcmp_frames_gbps, "memcmp of the frames"}}});
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  std::uint64_t check_errors = 0;  // all buffers are clean, so anything here is a bug
  std::vector<std::vector<Row>> runs;
  for (int run = 0; run < options.runs; ++run) runs.push_back(one_run(options.seconds, check_errors));

  fmt::print("PRBS throughput, one core, {} MiB buffer, {:g} s a row; of {} runs, the median rate and the median\n",
             kBufferBytes >> 20, options.seconds, options.runs);
  fmt::print("of the ratios, each to its own run's reference\n\n");
  fmt::print("{:<30} {:>10}  {}\n", "operation", "GB/s", "ratio");
  fmt::print("{:-<30} {:->10}  {:-<32}\n", "", "", "");
  for (std::size_t r = 0; r < runs.front().size(); ++r) {
    std::vector<std::size_t> order(runs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return runs[a][r].gbps < runs[b][r].gbps; });
    // The median run by rate, and each ratio's median over the runs (each from its own run).
    const Row& middle = runs[order[order.size() / 2]][r];
    std::string ratios;
    for (std::size_t k = 0; k < middle.ratios.size(); ++k) {
      std::vector<double> values;
      for (const auto& run : runs) values.push_back(run[r].ratios[k].value);
      std::sort(values.begin(), values.end());
      ratios += fmt::format("{}{:.2f}x {}", k == 0 ? "" : ", ", values[values.size() / 2], middle.ratios[k].to);
    }
    fmt::print("{:<30} {:>10.2f}  {}\n", middle.what, middle.gbps, ratios);
  }
  fmt::print(
      "\nGB/s count the bytes of one buffer (memcmp reads two). Goal (issue 61): fill >= 1.0x memcpy and check >= "
      "1.0x memcmp on {} B frames.\n",
      kFrameBytes);
  if (check_errors != 0) fmt::print("WARNING: the checker counted {} bit errors on clean data\n", check_errors);
  return 0;
}
