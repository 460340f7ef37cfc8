// How every engine publishes a latency summary in a stream's gauges, under the canonical names.
#pragma once

#include <string>

#include "common/counter_names.hpp"
#include "common/latency_histogram.hpp"
#include "tusk.pb.h"

namespace tusk {

// Adds min/p50/p99/p99.9/max/mean when anything was recorded; a stream without samples has none.
inline void put_latency_gauges(const LatencySummary& latency, proto::StreamCounters& stream) {
  namespace c = counters;
  if (latency.count == 0) return;
  auto& gauges = *stream.mutable_gauges();
  gauges[std::string(c::kLatencyMinNs)] = static_cast<double>(latency.min_ns);
  gauges[std::string(c::kLatencyP50Ns)] = static_cast<double>(latency.p50_ns);
  gauges[std::string(c::kLatencyP99Ns)] = static_cast<double>(latency.p99_ns);
  gauges[std::string(c::kLatencyP999Ns)] = static_cast<double>(latency.p999_ns);
  gauges[std::string(c::kLatencyMaxNs)] = static_cast<double>(latency.max_ns);
  gauges[std::string(c::kLatencyMeanNs)] = latency.mean_ns;
}

}  // namespace tusk
