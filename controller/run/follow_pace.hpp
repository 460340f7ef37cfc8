// How often the controller looks at a running test, and when it wakes for the test's timed hook
// (link_failure's down command): the orchestrator's follow loop, as plain arithmetic.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace tusk::orchestration {

inline constexpr std::chrono::milliseconds kPollInterval{50};

// While a test runs, each poll walks every agent (links, results, the progress line): every 50 ms
// that was a quarter of the controller's CPU at 2,048 agents, more than ingesting their samples.
// Polling less often as the fleet grows keeps that walk's cost about the same at any size, and
// notices the end of a test at most half a second late.
inline std::chrono::milliseconds follow_interval(std::size_t agents) {
  return std::clamp<std::chrono::milliseconds>(kPollInterval * static_cast<int>(agents / 256), kPollInterval,
                                               std::chrono::milliseconds(500));
}

// How long the loop sleeps from `now_ns`: its poll interval, or less where the timed hook falls
// due sooner (`hook_due_ns`, realtime; none once it ran). Woken by the poll alone, the hook ran up
// to an interval late: 50 ms on a few agents, 400 ms at 2,048, 500 ms past 2,560.
inline std::chrono::nanoseconds follow_sleep(std::chrono::milliseconds poll, std::optional<std::int64_t> hook_due_ns,
                                             std::int64_t now_ns) {
  const std::chrono::nanoseconds interval = poll;
  if (!hook_due_ns) return interval;
  return std::clamp(std::chrono::nanoseconds(*hook_due_ns - now_ns), std::chrono::nanoseconds(0), interval);
}

// A checkpoint (report.json written whole, which takes a while at scale) waits while the timed
// hook is due within this, so that writing it never makes the hook late.
inline constexpr std::chrono::seconds kCheckpointClearOfHook{1};

inline bool checkpoint_clear_of_hook(std::optional<std::int64_t> hook_due_ns, std::int64_t now_ns) {
  return !hook_due_ns || *hook_due_ns - now_ns > std::chrono::nanoseconds(kCheckpointClearOfHook).count();
}

}  // namespace tusk::orchestration
