#include "controller/verdict/window_tally.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/rates.hpp"
#include "controller/profile/threshold_catalog.hpp"

namespace tusk {

namespace {

constexpr std::string_view kThroughput = "throughput_bps";

}  // namespace

bool judged_per_window(const Threshold& threshold) {
  if (threshold.metric == kThroughput) return threshold.bound == Bound::Min;
  const ThresholdKind* kind = find_threshold(threshold.key);
  return kind && kind->value == ThresholdKind::Value::Count && kind->scope == ThresholdKind::Scope::Stream;
}

void WindowTally::add(std::uint32_t index, std::uint64_t elapsed_ms, std::int64_t agent_time_ns,
                      const std::vector<std::int64_t>& growth, std::uint64_t bytes, std::uint64_t span_ms) {
  if (!active() || index == 0) return;
  const std::uint32_t window_index = (index - 1) / samples_per_window;
  if (window_index != current_) {
    if (current_ != UINT32_MAX) judge();
    current_ = window_index;
    current_start_ms_ = static_cast<std::uint64_t>(window.count()) * window_index;
    current_start_agent_ns_ =
        agent_time_ns - static_cast<std::int64_t>(elapsed_ms - std::min(elapsed_ms, current_start_ms_)) * 1'000'000;
    sums_.assign(thresholds.size(), 0);
    bytes_ = span_ms_ = 0;
  }
  for (std::size_t i = 0; i < thresholds.size() && i < growth.size(); ++i) sums_[i] += growth[i];
  bytes_ += bytes;
  span_ms_ += span_ms;
}

void WindowTally::close() {
  if (current_ == UINT32_MAX) return;
  judge();
  current_ = UINT32_MAX;
}

void WindowTally::judge() {
  ++judged;
  failed_by_threshold.resize(thresholds.size());
  const std::optional<double> rate =
      span_ms_ > 0 ? std::optional(throughput_bps(static_cast<double>(bytes_), span_ms_ / 1e3)) : std::nullopt;
  if (rate && bytes_ > 0) {
    // Welford's running mean and variance.
    ++rate_windows;
    const double delta = *rate - rate_mean;
    rate_mean += delta / rate_windows;
    rate_m2 += delta * (*rate - rate_mean);
  }
  WindowFailure failure;
  for (std::size_t i = 0; i < thresholds.size(); ++i) {
    const Threshold& threshold = thresholds[i];
    const bool throughput = threshold.metric == kThroughput;
    if (throughput && !rate) continue;
    const double measured = throughput ? *rate : static_cast<double>(std::max<std::int64_t>(0, sums_[i]));
    const bool passed = threshold.bound == Bound::Max ? measured <= threshold.value : measured >= threshold.value;
    if (passed) continue;
    ++failed_by_threshold[i];
    const double excess = threshold.bound == Bound::Max ? (measured - threshold.value) / std::max(threshold.value, 1.0)
                                                        : (threshold.value - measured) / std::max(threshold.value, 1.0);
    failure.excess = std::max(failure.excess, excess);
    if (!failure.text.empty()) failure.text += ", ";
    failure.text += fmt::format("{} {:.6g} {} {:.6g}", threshold.metric, measured,
                                threshold.bound == Bound::Max ? "> max" : "< min", threshold.value);
  }
  if (failure.text.empty()) return;
  ++failed;
  failure.window = current_;
  failure.start_ms = current_start_ms_;
  failure.start_agent_ns = current_start_agent_ns_;
  latest_failed_start_ms = failure.start_ms;
  if (!first) first = failure;
  if (!worst || failure.excess > worst->excess) worst = std::move(failure);
}

std::optional<double> WindowTally::throughput_cv() const {
  if (rate_windows < 2 || rate_mean <= 0) return std::nullopt;
  return std::sqrt(rate_m2 / (rate_windows - 1)) / rate_mean;
}

}  // namespace tusk
