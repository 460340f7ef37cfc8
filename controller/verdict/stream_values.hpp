// A stream's counter or gauge by its canonical name (common/counter_names.hpp), or nothing when
// the stream does not report it: what the verdict, the pairing of senders and receivers and the
// collective report all read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tusk.pb.h"

namespace tusk {

inline std::optional<std::uint64_t> counter_of(const proto::StreamCounters& stream, std::string_view name) {
  const auto it = stream.counters().find(std::string(name));
  if (it == stream.counters().end()) return std::nullopt;
  return it->second;
}

// The counter, or 0 where the stream does not report it: for sums over streams of every kind.
inline std::uint64_t counter_or_zero(const proto::StreamCounters& stream, std::string_view name) {
  return counter_of(stream, name).value_or(0);
}

inline std::optional<double> gauge_of(const proto::StreamCounters& stream, std::string_view name) {
  const auto it = stream.gauges().find(std::string(name));
  if (it == stream.gauges().end()) return std::nullopt;
  return it->second;
}

}  // namespace tusk
