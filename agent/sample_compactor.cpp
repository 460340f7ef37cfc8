#include "agent/sample_compactor.hpp"

#include <algorithm>

#include "common/wire_bounds.hpp"

namespace tusk {

bool SampleCompactor::fits(const Layout& layout, const proto::StreamCounters& stream) {
  if (layout.counters.size() != stream.counters().size() || layout.gauges.size() != stream.gauges().size()) {
    return false;
  }
  for (const auto& name : layout.counters) {
    if (!stream.counters().contains(name)) return false;
  }
  for (const auto& name : layout.gauges) {
    if (!stream.gauges().contains(name)) return false;
  }
  return true;
}

void SampleCompactor::compact(proto::StreamCounters& stream) {
  Layout& layout = layouts_[stream.stream_id()];
  const bool named = !layout.counters.empty() || !layout.gauges.empty();
  const bool same_names = named && fits(layout, stream);
  const bool lay_out = !same_names || ++layout.samples_since >= wire::kLayoutEverySamples;
  if (lay_out) {
    // The names again in the order they had (a map's order is its own and may change between two
    // samples): the controller keeps one layout, and its series file one row and one minute, for
    // a stream whose names stay; new names are sorted.
    if (!same_names) {
      layout.counters.clear();
      layout.gauges.clear();
      for (const auto& [name, value] : stream.counters()) layout.counters.push_back(name);
      for (const auto& [name, value] : stream.gauges()) layout.gauges.push_back(name);
      std::sort(layout.counters.begin(), layout.counters.end());
      std::sort(layout.gauges.begin(), layout.gauges.end());
    }
    layout.samples_since = 0;
    for (const auto& name : layout.counters) stream.add_counter_names(name);
    for (const auto& name : layout.gauges) stream.add_gauge_names(name);
  }
  if (!lay_out) {
    // Between layouts the controller knows who the stream is: the id and the values alone.
    proto::StreamCounters values;
    values.set_stream_id(stream.stream_id());
    values.mutable_counter_values()->Reserve(static_cast<int>(layout.counters.size()));
    for (const auto& name : layout.counters) values.add_counter_values(stream.counters().at(name));
    for (const auto& name : layout.gauges) values.add_gauge_values(stream.gauges().at(name));
    stream.Swap(&values);
    return;
  }
  for (const auto& name : layout.counters) stream.add_counter_values(stream.counters().at(name));
  for (const auto& name : layout.gauges) stream.add_gauge_values(stream.gauges().at(name));
  stream.clear_counters();
  stream.clear_gauges();
}

}  // namespace tusk
