// The limits this agent holds every controller to, whatever a plan or a HelloAck says: its own
// caps on rate, duration and lease (--max-rate, --max-duration, --max-lease), and the bounds a
// plan's timing must keep so that a bad controller cannot make the agent busy-loop, run forever or
// keep sending long after it went quiet.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/wire_bounds.hpp"
#include "tusk.pb.h"

namespace tusk {

struct AgentLimits {
  double max_rate_bps = 0;  // 0: only the plan's own cap
  std::chrono::milliseconds max_duration{std::chrono::hours(24)};
  std::chrono::milliseconds max_lease{std::chrono::seconds(30)};
};

// Below this a lease expires between two heartbeats of a healthy connection.
inline constexpr std::chrono::milliseconds kMinLease{300};
inline constexpr std::chrono::milliseconds kMinHeartbeat{100};
inline constexpr std::chrono::milliseconds kMaxHeartbeat{10'000};

// Why the plan cannot run here, or nullopt. `capped_bps` is what the engine would really send
// (its CappedBitRate; 0 is as fast as it can, which no cap allows).
std::optional<std::string> plan_beyond_limits(const proto::Plan& plan, double capped_bps, const AgentLimits& limits);

// The lease a HelloAck asks for (0: none, keep `current`), held to [kMinLease, limits.max_lease].
std::chrono::milliseconds bounded_lease(std::uint32_t asked_ms, std::chrono::milliseconds current,
                                        const AgentLimits& limits);
// The heartbeat interval a HelloAck asks for (0: 1 s), held to [kMinHeartbeat, min(kMaxHeartbeat,
// lease / 3)], so heartbeats keep the controller's view of us alive.
std::chrono::milliseconds bounded_heartbeat(std::uint32_t asked_ms, std::chrono::milliseconds lease);

}  // namespace tusk
