// A stream's sample written as an engine makes it (counters and gauges by name), folded into a
// StreamSeries as the run folds a compact one: its names as the layout (the series' own when they
// are the same), its values in that order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "controller/outcome/stream_series.hpp"

namespace tusk::testing {

inline bool add_named(StreamSeries& series, std::uint32_t index, std::uint64_t elapsed_ms,
                      const proto::StreamCounters& named) {
  std::vector<std::string> counter_names, gauge_names;
  for (const auto& [name, value] : named.counters()) counter_names.push_back(name);
  for (const auto& [name, value] : named.gauges()) gauge_names.push_back(name);
  std::shared_ptr<const StreamLayout> layout = series.layout();
  if (!layout || !layout->same_names(counter_names, gauge_names)) {
    layout = std::make_shared<const StreamLayout>(counter_names, gauge_names);
  }
  std::vector<std::uint64_t> counters;
  std::vector<double> gauges;
  for (const auto& name : layout->counters) counters.push_back(named.counters().at(name));
  for (const auto& name : layout->gauges) gauges.push_back(named.gauges().at(name));
  return series.add(index, elapsed_ms, std::move(layout), std::move(counters), std::move(gauges));
}

}  // namespace tusk::testing
