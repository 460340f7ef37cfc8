#include "controller/outcome/stream_layout.hpp"

#include <algorithm>

#include "common/counter_names.hpp"

namespace tusk {

namespace {

int index_of(const std::vector<std::string>& names, std::string_view name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

}  // namespace

StreamLayout::StreamLayout(std::vector<std::string> counter_names, std::vector<std::string> gauge_names)
    : counters(std::move(counter_names)), gauges(std::move(gauge_names)) {
  namespace c = tusk::counters;
  constexpr std::array<std::string_view, kTrackedCount> kNames{
      c::kRxBytes,          c::kTxBytes,     c::kLostFrames,  c::kGapLostFrames, c::kErroredFrames, c::kIntegrityErrors,
      c::kCompletionErrors, c::kRetransmits, c::kTrafficGaps, c::kLinkFlaps,     c::kStepsDone};
  for (std::size_t i = 0; i < kTrackedCount; ++i) tracked[i] = index_of(counters, kNames[i]);
  step_time_mean = index_of(gauges, c::kStepTimeMeanNs);
}

int StreamLayout::counter_index(std::string_view name) const {
  return index_of(counters, name);
}

int StreamLayout::gauge_index(std::string_view name) const {
  return index_of(gauges, name);
}

}  // namespace tusk
