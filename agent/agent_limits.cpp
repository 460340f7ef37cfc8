#include "agent/agent_limits.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tusk {

std::optional<std::string> plan_beyond_limits(const proto::Plan& plan, double capped_bps, const AgentLimits& limits) {
  if (plan.duration_ms() == 0) return "duration 0 ms: nothing to run";
  const std::chrono::milliseconds interval{plan.sample_interval_ms()};
  if (interval < wire::kMinSampleInterval || interval > wire::kMaxSampleInterval) {
    return fmt::format("sample interval {} ms is outside {}..{} ms", plan.sample_interval_ms(),
                       wire::kMinSampleInterval.count(), wire::kMaxSampleInterval.count());
  }
  // The tighter of the plan's cap and this agent's own.
  for (const auto& [cap, whose] : {std::pair{plan.max_rate_bps(), "the plan's safety cap"},
                                   std::pair{limits.max_rate_bps, "this agent's --max-rate"}}) {
    if (cap > 0 && (capped_bps <= 0 || capped_bps > cap)) {
      return fmt::format("requested rate {} bit/s is over {} ({} bit/s)",
                         capped_bps > 0 ? fmt::format("{:.0f}", capped_bps) : std::string("line rate,"), whose, cap);
    }
  }
  const std::chrono::milliseconds duration{plan.duration_ms()};
  if (plan.max_duration_ms() > 0 && plan.duration_ms() > plan.max_duration_ms()) {
    return fmt::format("duration {} ms is over the plan's safety cap ({} ms)", plan.duration_ms(),
                       plan.max_duration_ms());
  }
  if (duration > limits.max_duration) {
    return fmt::format("duration {} ms is over this agent's --max-duration ({} ms)", plan.duration_ms(),
                       limits.max_duration.count());
  }
  return std::nullopt;
}

std::chrono::milliseconds bounded_lease(std::uint32_t asked_ms, std::chrono::milliseconds current,
                                        const AgentLimits& limits) {
  if (asked_ms == 0) return current;
  return std::clamp(std::chrono::milliseconds(asked_ms), kMinLease, std::max(kMinLease, limits.max_lease));
}

std::chrono::milliseconds bounded_heartbeat(std::uint32_t asked_ms, std::chrono::milliseconds lease) {
  const std::chrono::milliseconds asked = asked_ms > 0 ? std::chrono::milliseconds(asked_ms) : std::chrono::seconds(1);
  const std::chrono::milliseconds most = std::max(kMinHeartbeat, std::min(kMaxHeartbeat, lease / 3));
  return std::clamp(asked, kMinHeartbeat, most);
}

}  // namespace tusk
