// What the run keeps of one stream's samples while it lasts: its latest values and at most
// kMaxSeriesBins bins of its series, so a stream costs the same at hour 20 as at minute 1. Every
// sample in full goes to the run's series file (controller/series/series_file.hpp), not to memory.
//
// Bins are aligned by sample index: with `width` samples per bin, bin k holds the intervals of
// samples k*width+1 .. (k+1)*width, whichever stream they belong to. When a sample falls past the
// last bin, neighbouring bins are merged in pairs and the width doubles, so streams of one test that
// saw the same samples have the same width, and a report brings any two to one width by merging.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "controller/outcome/stream_layout.hpp"
#include "controller/verdict/window_tally.hpp"
#include "tusk.pb.h"

namespace tusk {

// 4 KiB a stream: 32 to 64 points on a report's chart of any length (the series file holds every
// sample), and a controller of 4,096 streams within 16 KiB per stream.
inline constexpr std::size_t kMaxSeriesBins = 64;

// Consecutive sample intervals of one stream, merged: counts summed exactly, throughput over the
// bin's time, the worst interval kept.
// 64 bytes: times in milliseconds fit 49 days, and the worst values need no more than a float's digits.
struct SeriesBin {
  std::uint32_t samples = 0;     // of this stream that fell in the bin; 0: none did
  std::uint32_t last_index = 0;  // the latest of them
  std::uint32_t elapsed_ms = 0;  // at that sample
  std::uint32_t span_ms = 0;     // the time its deltas cover
  std::uint64_t bytes = 0;       // received (rx_bytes), or sent on a stream that only sends
  std::uint64_t lost = 0;        // lost_frames + gap_lost_frames
  std::uint64_t damaged = 0;     // errored_frames + integrity_errors + completion_errors
  std::uint64_t retransmits = 0;
  std::uint32_t traffic_gaps = 0;
  std::uint32_t link_flaps = 0;
  float min_throughput_bps = -1;  // the slowest interval's; < 0: none measured
  float max_step_time_ns = -1;    // a training replay's slowest interval's time per step; < 0: none

  void merge(const SeriesBin& later);
  std::optional<double> throughput_bps() const;
};

class StreamSeries {
 public:
  // Folds a sample of this stream (its values in `layout`'s order) into the bins and keeps its
  // values as the latest. A sample no newer than the latest (a late retry) adds nothing and
  // returns false: the later sample's deltas already hold its interval.
  bool add(std::uint32_t index, std::uint64_t elapsed_ms, std::shared_ptr<const StreamLayout> layout,
           std::span<const std::uint64_t> counters, std::span<const double> gauges, std::int64_t agent_time_ns = 0);
  // What the stream's latest layout sample said of it besides its values: ids, kind, peer, flow, path.
  void describe(proto::StreamCounters&& info) { info_ = std::move(info); }

  const proto::StreamCounters& info() const { return info_; }
  // The names of the latest values; nullptr before the first sample.
  const std::shared_ptr<const StreamLayout>& layout() const { return layout_; }
  // The latest sample's counters (the stream's running totals) and gauges, in layout() order.
  const std::vector<std::uint64_t>& latest_counters() const { return latest_; }
  const std::vector<double>& latest_gauges() const { return latest_gauges_; }
  std::uint64_t latest_counter(std::string_view name) const;
  std::uint32_t latest_index() const { return latest_index_; }
  std::uint64_t latest_elapsed_ms() const { return latest_elapsed_ms_; }
  // info() with the latest values in its counter and gauge maps: the stream as a result reads.
  proto::StreamCounters latest_named() const;
  // What it sent in its last interval (tx_bytes), in bits per second.
  double latest_tx_bps() const { return latest_tx_bps_; }

  std::uint32_t width() const { return width_; }
  const std::vector<SeriesBin>& bins() const { return bins_; }

  // The stream's row in the run's series file (controller/series/series_file.hpp); 0: none yet.
  std::int64_t series_row = 0;
  // Its thresholds judged window by window, when the test has a window (set before the first sample).
  WindowTally windows;
  // The bins merged to `width` samples per bin (a power of two no smaller than width()).
  std::vector<SeriesBin> bins_at(std::uint32_t width) const;
  // What a checkpoint judges a stream with windows on while it runs: its windows, without its bins,
  // identity or latest values (a checkpoint reads those from the live stream).
  StreamSeries for_judging() const;

 private:
  void add_to_bins(std::uint32_t index, const SeriesBin& interval);
  // Each window threshold's counter change from the latest sample to `counters` (in `layout`):
  // signed, since an agent takes one back when it reclassifies (a traffic gap that closed is a flap).
  // In windows.latest_growth, whose room is kept: no allocation per sample.
  const std::vector<std::int64_t>& window_growth(const StreamLayout& layout, std::span<const std::uint64_t> counters);

  proto::StreamCounters info_;
  std::shared_ptr<const StreamLayout> layout_;
  std::vector<std::uint64_t> latest_;
  std::vector<double> latest_gauges_;
  std::uint32_t latest_index_ = 0;
  std::uint64_t latest_elapsed_ms_ = 0;
  double latest_tx_bps_ = 0;
  std::uint32_t width_ = 1;
  std::vector<SeriesBin> bins_;
};

}  // namespace tusk
