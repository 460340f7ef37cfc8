// Estimating an agent's clock offset from probe/echo exchanges (the NTP four-timestamp method).
// The sample with the smallest round trip is the one least disturbed by queueing, so it wins.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tusk.pb.h"

namespace tusk {

struct ClockSample {
  std::int64_t offset_ns = 0;  // agent clock minus controller clock
  std::int64_t rtt_ns = 0;     // round trip without the agent's own processing time
};

ClockSample clock_sample_from(const proto::ClockEcho& echo, std::int64_t controller_receive_ns);

class ClockEstimate {
 public:
  void add(const ClockSample& sample);
  void clear() { samples_.clear(); }
  std::size_t count() const { return samples_.size(); }
  std::optional<ClockSample> best() const;

 private:
  std::vector<ClockSample> samples_;
};

}  // namespace tusk
