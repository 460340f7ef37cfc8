#include "controller/outcome/stream_series.hpp"

#include <algorithm>

#include "common/counter_names.hpp"
#include "common/rates.hpp"

namespace tusk {

namespace {

// The stream's values before and after one sample, each read through its own layout (the names
// may change between two samples).
struct Interval {
  const StreamLayout* before_layout;
  std::span<const std::uint64_t> before;
  const StreamLayout& now_layout;
  std::span<const std::uint64_t> now;

  // A counter's growth since the previous sample; one that went back (an agent's restart of it)
  // counts from zero.
  std::uint64_t growth(StreamLayout::Tracked counter) const {
    const std::uint64_t was = before_layout ? value_at(before, before_layout->tracked[counter]) : 0;
    const std::uint64_t is = value_at(now, now_layout.tracked[counter]);
    return is >= was ? is - was : is;
  }
};

// A training replay's mean time per step within one interval, from the running mean the agent
// reports: the step timeline shows when a rank slowed down, which the whole-run mean hides.
float interval_step_time_ns(const Interval& interval, std::span<const double> before_gauges,
                            std::span<const double> now_gauges) {
  const int mean_at = interval.now_layout.step_time_mean;
  if (mean_at < 0 || static_cast<std::size_t>(mean_at) >= now_gauges.size()) return -1;
  const StreamLayout::Tracked steps = StreamLayout::kStepsDone;
  const double steps_now = static_cast<double>(value_at(interval.now, interval.now_layout.tracked[steps]));
  const double steps_before =
      interval.before_layout ? static_cast<double>(value_at(interval.before, interval.before_layout->tracked[steps]))
                             : 0.0;
  if (steps_now <= steps_before) return -1;
  double mean_before = 0;
  if (interval.before_layout) {
    const int before_at = interval.before_layout->step_time_mean;
    if (before_at >= 0 && static_cast<std::size_t>(before_at) < before_gauges.size()) {
      mean_before = before_gauges[static_cast<std::size_t>(before_at)];
    }
  }
  const double total_before = steps_before * mean_before;
  const double total_now = steps_now * now_gauges[static_cast<std::size_t>(mean_at)];
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

bool StreamSeries::add(std::uint32_t index, std::uint64_t elapsed_ms, std::shared_ptr<const StreamLayout> layout,
                       std::span<const std::uint64_t> counters, std::span<const double> gauges,
                       std::int64_t agent_time_ns) {
  if (index == 0 || index <= latest_index_ || !layout) return false;
  const Interval change{layout_.get(), latest_, *layout, counters};
  SeriesBin interval;
  interval.samples = 1;
  interval.last_index = index;
  interval.elapsed_ms = static_cast<std::uint32_t>(std::min<std::uint64_t>(elapsed_ms, UINT32_MAX));
  interval.span_ms = static_cast<std::uint32_t>(
      elapsed_ms > latest_elapsed_ms_ ? std::min<std::uint64_t>(elapsed_ms - latest_elapsed_ms_, UINT32_MAX) : 0);
  const bool receives = layout->tracked[StreamLayout::kRxBytes] >= 0;
  interval.bytes = change.growth(receives ? StreamLayout::kRxBytes : StreamLayout::kTxBytes);
  interval.lost = change.growth(StreamLayout::kLost) + change.growth(StreamLayout::kGapLost);
  interval.damaged = change.growth(StreamLayout::kErrored) + change.growth(StreamLayout::kIntegrity) +
                     change.growth(StreamLayout::kCompletion);
  interval.retransmits = change.growth(StreamLayout::kRetransmits);
  interval.traffic_gaps = static_cast<std::uint32_t>(change.growth(StreamLayout::kTrafficGaps));
  interval.link_flaps = static_cast<std::uint32_t>(change.growth(StreamLayout::kLinkFlaps));
  const double interval_s = interval.span_ms / 1e3;
  if (interval_s > 0) {
    interval.min_throughput_bps = static_cast<float>(throughput_bps(static_cast<double>(interval.bytes), interval_s));
    latest_tx_bps_ = throughput_bps(static_cast<double>(change.growth(StreamLayout::kTxBytes)), interval_s);
  }
  interval.max_step_time_ns = interval_step_time_ns(change, latest_gauges_, gauges);
  add_to_bins(index, interval);
  if (windows.active()) {
    windows.add(index, elapsed_ms, agent_time_ns, window_growth(*layout, counters), interval.bytes, interval.span_ms);
  }
  layout_ = std::move(layout);
  // Into the vectors' own room: after the first sample a stream's values cost no allocation.
  latest_.assign(counters.begin(), counters.end());
  latest_gauges_.assign(gauges.begin(), gauges.end());
  latest_index_ = index;
  latest_elapsed_ms_ = elapsed_ms;
  return true;
}

const std::vector<std::int64_t>& StreamSeries::window_growth(const StreamLayout& layout,
                                                             std::span<const std::uint64_t> counters) {
  if (windows.indexed_for != &layout) {
    windows.indexes.clear();
    for (const auto& threshold : windows.thresholds) windows.indexes.push_back(layout.counter_index(threshold.metric));
    windows.indexed_for = &layout;
  }
  std::vector<std::int64_t>& growth = windows.latest_growth;
  growth.assign(windows.thresholds.size(), 0);
  for (std::size_t i = 0; i < growth.size(); ++i) {
    const std::uint64_t is = value_at(counters, windows.indexes[i]);
    // The latest sample's position: the same as now's unless the names changed between them.
    const int before_at = layout_.get() == &layout ? windows.indexes[i]
                          : layout_                ? layout_->counter_index(windows.thresholds[i].metric)
                                                   : -1;
    const std::uint64_t was = value_at(latest_, before_at);
    growth[i] = static_cast<std::int64_t>(is) - static_cast<std::int64_t>(was);
    // As the verdict counts them: a traffic gap that closed again is a flap, judged by max_flaps.
    if (windows.thresholds[i].metric == counters::kTrafficGaps) {
      const int flaps_before = layout_ ? layout_->tracked[StreamLayout::kLinkFlaps] : -1;
      growth[i] -= static_cast<std::int64_t>(value_at(counters, layout.tracked[StreamLayout::kLinkFlaps])) -
                   static_cast<std::int64_t>(value_at(latest_, flaps_before));
    }
  }
  return growth;
}

proto::StreamCounters StreamSeries::latest_named() const {
  proto::StreamCounters stream = info_;
  if (!layout_) return stream;
  for (std::size_t i = 0; i < layout_->counters.size() && i < latest_.size(); ++i) {
    stream.mutable_counters()->insert({layout_->counters[i], latest_[i]});
  }
  for (std::size_t i = 0; i < layout_->gauges.size() && i < latest_gauges_.size(); ++i) {
    stream.mutable_gauges()->insert({layout_->gauges[i], latest_gauges_[i]});
  }
  return stream;
}

std::uint64_t StreamSeries::latest_counter(std::string_view name) const {
  return layout_ ? value_at(latest_, layout_->counter_index(name)) : 0;
}

void StreamSeries::add_to_bins(std::uint32_t index, const SeriesBin& interval) {
  while ((index - 1) / width_ >= kMaxSeriesBins) {
    // In place, so the bins keep their one allocation.
    for (std::size_t i = 0; i < bins_.size(); i += 2) {
      SeriesBin pair = bins_[i];
      if (i + 1 < bins_.size()) pair.merge(bins_[i + 1]);
      bins_[i / 2] = pair;
    }
    bins_.resize((bins_.size() + 1) / 2);
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

StreamSeries StreamSeries::for_judging() const {
  StreamSeries judged;
  judged.series_row = series_row;
  judged.windows = windows;
  judged.width_ = width_;
  judged.latest_index_ = latest_index_;
  judged.latest_elapsed_ms_ = latest_elapsed_ms_;
  return judged;
}

std::vector<SeriesBin> StreamSeries::bins_at(std::uint32_t width) const {
  if (width <= width_) return bins_;
  const std::uint32_t per = width / width_;
  std::vector<SeriesBin> merged((bins_.size() + per - 1) / per);
  for (std::size_t i = 0; i < bins_.size(); ++i) merged[i / per].merge(bins_[i]);
  return merged;
}

}  // namespace tusk
