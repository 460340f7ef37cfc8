// The names behind a stream's compact sample values (proto StreamCounters.counter_values), in the
// order the agent sent them, and where the counters a stream's bins read sit among them. One per
// stream, shared by every sample sent on it; a new one only when the agent's names change.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tusk {

struct StreamLayout {
  // The counters StreamSeries folds into bins.
  enum Tracked {
    kRxBytes,
    kTxBytes,
    kLost,
    kGapLost,
    kErrored,
    kIntegrity,
    kCompletion,
    kRetransmits,
    kTrafficGaps,
    kLinkFlaps,
    kStepsDone,
    kTrackedCount
  };

  StreamLayout(std::vector<std::string> counter_names, std::vector<std::string> gauge_names);

  // Where `name` is among the counters (gauges); -1: not there. The first, if named twice.
  int counter_index(std::string_view name) const;
  int gauge_index(std::string_view name) const;
  bool same_names(const std::vector<std::string>& counter_names, const std::vector<std::string>& gauge_names) const {
    return counters == counter_names && gauges == gauge_names;
  }

  std::vector<std::string> counters, gauges;
  std::array<int, kTrackedCount> tracked{};  // index into counters; -1: absent
  int step_time_mean = -1;                   // index into gauges; -1: absent
};

// One value of a stream's sample by its layout position; 0 where the layout lacks it (-1).
inline std::uint64_t value_at(std::span<const std::uint64_t> values, int index) {
  return index >= 0 && static_cast<std::size_t>(index) < values.size() ? values[static_cast<std::size_t>(index)] : 0;
}

}  // namespace tusk
