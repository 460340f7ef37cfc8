#include "controller/run/clock_sync.hpp"

#include <algorithm>

namespace tusk {

ClockSample clock_sample_from(const proto::ClockEcho& echo, std::int64_t controller_receive_ns) {
  const std::int64_t t1 = echo.controller_send_ns();
  const std::int64_t t2 = echo.agent_receive_ns();
  const std::int64_t t3 = echo.agent_send_ns();
  const std::int64_t t4 = controller_receive_ns;
  ClockSample sample;
  sample.offset_ns = ((t2 - t1) + (t3 - t4)) / 2;
  sample.rtt_ns = std::max<std::int64_t>(0, (t4 - t1) - (t3 - t2));
  return sample;
}

void ClockEstimate::add(const ClockSample& sample) { samples_.push_back(sample); }

std::optional<ClockSample> ClockEstimate::best() const {
  if (samples_.empty()) return std::nullopt;
  return *std::min_element(samples_.begin(), samples_.end(),
                           [](const ClockSample& a, const ClockSample& b) { return a.rtt_ns < b.rtt_ns; });
}

}  // namespace tusk
