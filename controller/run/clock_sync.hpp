// Estimating an agent's clock offset from probe/echo exchanges (the NTP four-timestamp method).
// The sample with the smallest round trip is the one least disturbed by queueing, so it wins.
// Every timestamp of an echo but our own receive time comes from the agent: an echo that does not
// fit inside the round trip we measured ourselves is not a measurement and is dropped, so no
// agent can stretch the start margin of a run or overflow the arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "controller/outcome/agent_data.hpp"
#include "tusk.pb.h"

namespace tusk {

// The longest round trip a probe may take; an echo claiming an older send is dropped.
inline constexpr std::int64_t kMaxProbeRoundTripNs = 10'000'000'000;
// The farthest an agent's clock may be from ours, 30 days: beyond that it is not a clock.
inline constexpr std::int64_t kMaxClockOffsetNs = 30LL * 24 * 3600 * 1'000'000'000;
// The most a run's start is put off for the slowest agent's round trips.
inline constexpr std::int64_t kMaxRoundTripMarginNs = 30'000'000'000;

// nullopt for an echo that is not a measurement: sent in our future or longer ago than
// kMaxProbeRoundTripNs, agent times out of order, more processing than round trip, or an agent
// clock more than kMaxClockOffsetNs away.
std::optional<ClockSample> clock_sample_from(const proto::ClockEcho& echo, std::int64_t controller_receive_ns);

// The least a start is put off. Every agent has acknowledged its plan only once prepared (ports
// open, QPs connected, optics read), so the margin need only carry the StartAt there and arm a
// timer: 250 ms is tens of round trips even of a TCG guest on a loaded host. It was 1 s, which
// made every step of a schedule 0.75 s longer: 50 min of a 4,032-step night.
inline constexpr std::int64_t kMinStartMarginNs = 250'000'000;

// How far ahead every agent is told to start, so that each StartAt arrives first:
// kMinStartMarginNs or 20 round trips of the slowest agent (at most kMaxRoundTripMarginNs), plus
// 250 us per agent to send them.
std::int64_t start_margin_ns(std::int64_t max_rtt_ns, std::size_t agents);

// The best sample so far and how many were taken: constant memory, whatever an agent sends.
class ClockEstimate {
 public:
  void add(const ClockSample& sample);
  void clear() {
    best_.reset();
    count_ = 0;
  }
  std::size_t count() const { return count_; }
  std::optional<ClockSample> best() const { return best_; }

 private:
  std::optional<ClockSample> best_;
  std::size_t count_ = 0;
};

}  // namespace tusk
