#include "controller/run/clock_sync.hpp"

#include <algorithm>

namespace tusk {

std::optional<ClockSample> clock_sample_from(const proto::ClockEcho& echo, std::int64_t controller_receive_ns) {
  // In 128 bits: the agent's values may be anything an int64 holds (GCC and Clang have the type).
  __extension__ typedef __int128 Wide;
  const Wide t1 = echo.controller_send_ns();
  const Wide t2 = echo.agent_receive_ns();
  const Wide t3 = echo.agent_send_ns();
  const Wide t4 = controller_receive_ns;
  const Wide round_trip = t4 - t1;
  if (round_trip < 0 || round_trip > kMaxProbeRoundTripNs) return std::nullopt;
  const Wide processing = t3 - t2;
  if (processing < 0 || processing > round_trip) return std::nullopt;
  const Wide offset = ((t2 - t1) + (t3 - t4)) / 2;
  if (offset > kMaxClockOffsetNs || offset < -kMaxClockOffsetNs) return std::nullopt;
  ClockSample sample;
  sample.offset_ns = static_cast<std::int64_t>(offset);
  sample.rtt_ns = static_cast<std::int64_t>(round_trip - processing);
  return sample;
}

std::int64_t start_margin_ns(std::int64_t max_rtt_ns, std::size_t agents) {
  const std::int64_t round_trips = std::clamp<std::int64_t>(max_rtt_ns, 0, kMaxRoundTripMarginNs / 20) * 20;
  return std::max<std::int64_t>(kMinStartMarginNs, round_trips) + static_cast<std::int64_t>(agents) * 250'000;
}

void ClockEstimate::add(const ClockSample& sample) {
  ++count_;
  if (!best_ || sample.rtt_ns < best_->rtt_ns) best_ = sample;
}

}  // namespace tusk
