// Bounds on plan values that both sides keep: the controller when it reads a profile, the agent
// when a plan arrives (it trusts no controller). The full list of what is bounded, and where, is
// at the top of proto/tusk.proto.
#pragma once

#include <chrono>

namespace tusk::wire {

// Faster sampling busy-loops an agent for nothing; slower tells too little of a flap.
inline constexpr std::chrono::milliseconds kMinSampleInterval{100};
inline constexpr std::chrono::milliseconds kMaxSampleInterval{60'000};
// How far ahead a StartAt may be: the controller's start margin is at most 30 s.
inline constexpr std::chrono::milliseconds kMaxStartAhead{std::chrono::minutes(5)};

}  // namespace tusk::wire
