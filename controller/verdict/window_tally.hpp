// A stream's thresholds judged in every window of its test (TestSpec::window) as its samples are
// folded in: the window being filled, and what the windows so far came to (how many failed, the
// first and the worst, the spread of throughput between windows). Its size grows with the
// thresholds, never with the windows, so a 24-hour soak of one-minute windows costs what one does.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/profile/profile.hpp"

namespace tusk {

struct WindowFailure {
  std::uint32_t window = 0;         // from 0
  std::uint64_t start_ms = 0;       // its start, into the test
  std::int64_t start_agent_ns = 0;  // its start on the agent's clock
  double excess = 0;                // how far past its limit its worst check went, relative to the limit
  std::string text;                 // what failed in it: "lost_frames 12 > max 0"
};

struct WindowTally {
  // Set by the run before the stream's first sample: the window and the thresholds the stream is
  // judged on in each (count thresholds on its counters, min_throughput).
  std::chrono::milliseconds window{0};
  std::uint32_t samples_per_window = 0;
  std::vector<Threshold> thresholds;

  std::uint32_t judged = 0, failed = 0;
  std::vector<std::uint32_t> failed_by_threshold;  // by thresholds' order
  std::optional<WindowFailure> first, worst;
  std::uint64_t latest_failed_start_ms = 0;  // the start of the last window that failed
  // Throughput of each window that moved data: its coefficient of variation tells a steady link
  // from one that sags now and then.
  std::uint32_t rate_windows = 0;
  double rate_mean = 0, rate_m2 = 0;

  bool active() const { return samples_per_window > 0 && !thresholds.empty(); }
  // Adds one interval of sample `index`: each threshold's counter change (by thresholds' order;
  // min_throughput's is ignored; a count the agent took back is negative, and a window counts no
  // less than zero), the bytes it moved and the time it spans. A sample of a later window first
  // judges the one being filled.
  void add(std::uint32_t index, std::uint64_t elapsed_ms, std::int64_t agent_time_ns,
           const std::vector<std::int64_t>& growth, std::uint64_t bytes, std::uint64_t span_ms);
  // Judges the window being filled: the test is over.
  void close();
  std::optional<double> throughput_cv() const;

  // Counter positions in the layout they were resolved for (StreamSeries keeps them current).
  const void* indexed_for = nullptr;
  std::vector<int> indexes;
  // The latest sample's growth by threshold, where StreamSeries computes it (room kept between samples).
  std::vector<std::int64_t> latest_growth;

 private:
  void judge();

  std::uint32_t current_ = UINT32_MAX;  // the window being filled; none yet
  std::uint64_t current_start_ms_ = 0;
  std::int64_t current_start_agent_ns_ = 0;
  std::vector<std::int64_t> sums_;
  std::uint64_t bytes_ = 0, span_ms_ = 0;
};

// Whether `threshold` can be judged in a window: a count of a stream's counter, or min_throughput.
bool judged_per_window(const Threshold& threshold);

}  // namespace tusk
