#include "controller/outcome/stream_series.hpp"

#include <algorithm>

#include "common/counter_names.hpp"
#include "common/rates.hpp"

namespace tusk {

namespace {

std::uint64_t counter_of(const proto::StreamCounters& stream, std::string_view name) {
  const auto it = stream.counters().find(std::string(name));
  return it == stream.counters().end() ? 0 : it->second;
}

double gauge_of(const proto::StreamCounters& stream, std::string_view name) {
  const auto it = stream.gauges().find(std::string(name));
  return it == stream.gauges().end() ? 0.0 : it->second;
}

// A counter's growth since the previous sample; one that went back (an agent's restart of it)
// counts from zero.
std::uint64_t growth(const proto::StreamCounters& before, const proto::StreamCounters& now, std::string_view name) {
  const std::uint64_t was = counter_of(before, name), is = counter_of(now, name);
  return is >= was ? is - was : is;
}

// A training replay's mean time per step within one interval, from the running mean the agent
// reports: the step timeline shows when a rank slowed down, which the whole-run mean hides.
float interval_step_time_ns(const proto::StreamCounters& before, const proto::StreamCounters& now) {
  if (!now.gauges().contains(std::string(counters::kStepTimeMeanNs))) return -1;
  const double steps_before = static_cast<double>(counter_of(before, counters::kStepsDone));
  const double steps_now = static_cast<double>(counter_of(now, counters::kStepsDone));
  if (steps_now <= steps_before) return -1;
  const double total_before = steps_before * gauge_of(before, counters::kStepTimeMeanNs);
  const double total_now = steps_now * gauge_of(now, counters::kStepTimeMeanNs);
  return static_cast<float>(std::max(0.0, (total_now - total_before) / (steps_now - steps_before)));
}

float worst(float a, float b, bool lowest) {
  if (a < 0) return b;
  if (b < 0) return a;
  return lowest ? std::min(a, b) : std::max(a, b);
}

}  // namespace

void SeriesBin::merge(const SeriesBin& later) {
  if (later.samples == 0) return;
  if (samples == 0) {
    *this = later;
    return;
  }
  samples += later.samples;
  if (later.last_index >= last_index) {
    last_index = later.last_index;
    elapsed_ms = later.elapsed_ms;
  }
  span_ms += later.span_ms;
  bytes += later.bytes;
  lost += later.lost;
  damaged += later.damaged;
  retransmits += later.retransmits;
  traffic_gaps += later.traffic_gaps;
  link_flaps += later.link_flaps;
  min_throughput_bps = worst(min_throughput_bps, later.min_throughput_bps, true);
  max_step_time_ns = worst(max_step_time_ns, later.max_step_time_ns, false);
}

std::optional<double> SeriesBin::throughput_bps() const {
  if (span_ms == 0) return std::nullopt;
  return tusk::throughput_bps(static_cast<double>(bytes), span_ms / 1e3);
}

bool StreamSeries::add(std::uint32_t index, std::uint64_t elapsed_ms, proto::StreamCounters&& now) {
  if (index == 0 || index <= latest_index_) return false;
  SeriesBin interval;
  interval.samples = 1;
  interval.last_index = index;
  interval.elapsed_ms = static_cast<std::uint32_t>(std::min<std::uint64_t>(elapsed_ms, UINT32_MAX));
  interval.span_ms =
      static_cast<std::uint32_t>(elapsed_ms > latest_elapsed_ms_ ? std::min<std::uint64_t>(elapsed_ms - latest_elapsed_ms_, UINT32_MAX) : 0);
  const bool receives = now.counters().contains(std::string(counters::kRxBytes));
  interval.bytes = growth(latest_, now, receives ? counters::kRxBytes : counters::kTxBytes);
  interval.lost = growth(latest_, now, counters::kLostFrames) + growth(latest_, now, counters::kGapLostFrames);
  interval.damaged = growth(latest_, now, counters::kErroredFrames) +
                     growth(latest_, now, counters::kIntegrityErrors) +
                     growth(latest_, now, counters::kCompletionErrors);
  interval.retransmits = growth(latest_, now, counters::kRetransmits);
  interval.traffic_gaps = static_cast<std::uint32_t>(growth(latest_, now, counters::kTrafficGaps));
  interval.link_flaps = static_cast<std::uint32_t>(growth(latest_, now, counters::kLinkFlaps));
  const double interval_s = interval.span_ms / 1e3;
  if (interval_s > 0) {
    interval.min_throughput_bps = static_cast<float>(throughput_bps(static_cast<double>(interval.bytes), interval_s));
    latest_tx_bps_ = throughput_bps(static_cast<double>(growth(latest_, now, counters::kTxBytes)), interval_s);
  }
  interval.max_step_time_ns = interval_step_time_ns(latest_, now);
  add_to_bins(index, interval);
  latest_ = std::move(now);
  latest_index_ = index;
  latest_elapsed_ms_ = elapsed_ms;
  return true;
}

void StreamSeries::add_to_bins(std::uint32_t index, const SeriesBin& interval) {
  while ((index - 1) / width_ >= kMaxSeriesBins) {
    std::vector<SeriesBin> merged((bins_.size() + 1) / 2);
    for (std::size_t i = 0; i < bins_.size(); ++i) merged[i / 2].merge(bins_[i]);
    bins_ = std::move(merged);
    width_ *= 2;
  }
  const std::size_t at = (index - 1) / width_;
  if (bins_.size() <= at) {
    // Room for all kMaxSeriesBins at once when the first sample comes, so the vector never moves.
    if (bins_.capacity() < kMaxSeriesBins) bins_.reserve(kMaxSeriesBins);
    bins_.resize(at + 1);
  }
  bins_[at].merge(interval);
}

std::vector<SeriesBin> StreamSeries::bins_at(std::uint32_t width) const {
  if (width <= width_) return bins_;
  const std::uint32_t per = width / width_;
  std::vector<SeriesBin> merged((bins_.size() + per - 1) / per);
  for (std::size_t i = 0; i < bins_.size(); ++i) merged[i / per].merge(bins_[i]);
  return merged;
}

}  // namespace tusk
