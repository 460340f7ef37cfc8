// What the series file's writer knows of one stream while the run goes on: its layout's shape and
// which of its counters are events, its previous sample (did an event counter grow?), the minute
// being rolled up, the row being packed, and the spans of its elapsed time whose full-resolution
// rows outlive the retention (events and failed windows). Owned by the writer thread alone.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "controller/series/series_codec.hpp"

namespace tusk {

// Spans of a stream's elapsed time, merged where they touch; at most kMostKeptSpans (past it the
// two nearest are merged: a stream that fails all night keeps all night, not a list as long).
class KeptSpans {
 public:
  static constexpr std::size_t kMostKeptSpans = 256;
  void add(std::uint64_t from_ms, std::uint64_t to_ms);
  bool overlaps(std::uint64_t from_ms, std::uint64_t to_ms) const;
  bool empty() const { return spans_.empty(); }
  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& spans() const { return spans_; }

 private:
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans_;  // sorted, disjoint
};

struct SeriesTrack {
  std::int64_t layout = 0;  // the layout row its samples are in; 0: none yet
  std::size_t counters = 0, gauges = 0;
  std::vector<int> events;  // counters whose growth is an event
  std::vector<std::uint64_t> last_counters;
  bool has_last = false;
  std::uint64_t last_run_ms = 0;
  RollupAccumulator minute;
  std::string batch;  // minutes rolled up, not yet written: each its length and blob
  std::uint32_t batch_minutes = 0;
  std::int64_t batch_first_minute = 0;
  FullRowEncoder row;
  std::uint64_t row_first_ms = 0, row_last_ms = 0;  // its elapsed time
  std::uint64_t row_opened_run_ms = 0, row_newest_run_ms = 0;
  bool row_listed = false;  // in the writer's list of open rows
  KeptSpans kept;
};

}  // namespace tusk
