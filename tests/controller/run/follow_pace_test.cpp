// The follow loop's pace: it wakes for link_failure's down command when that falls due, whatever
// the fleet's poll interval, and writes no checkpoint just before it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

#include "controller/run/follow_pace.hpp"

namespace tusk::orchestration {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kMs = 1'000'000;

// When the hook runs, for a loop that polls every `poll` from `first_look_ns` and runs the hook
// on the first look at or after `due_ns` (as follow_test does), sleeping as `wake` says.
template <typename Wake>
std::int64_t hook_runs_at(std::int64_t first_look_ns, std::int64_t due_ns, Wake wake) {
  std::int64_t now = first_look_ns;
  while (now < due_ns) now += wake(due_ns, now).count();
  return now;
}

TEST(FollowPace, TheTimedHookRunsWhenDueWhateverTheFleetsPollInterval) {
  for (const std::size_t agents : {2u, 300u, 2048u, 100000u}) {
    const auto poll = follow_interval(agents);
    for (std::int64_t phase = 0; phase < 1000 * kMs; phase += 7 * kMs) {
      const std::int64_t due = 3000 * kMs;
      EXPECT_EQ(
          hook_runs_at(phase, due, [&](std::int64_t hook, std::int64_t now) { return follow_sleep(poll, hook, now); }),
          due)
          << agents << " agents, first look at +" << phase / kMs << " ms";
    }
  }
  // Before, the poll alone: up to an interval late (400 ms at 2,048 agents: 396 ms of these phases).
  std::int64_t worst = 0;
  for (std::int64_t phase = 0; phase < 1000 * kMs; phase += 7 * kMs) {
    const std::int64_t late =
        hook_runs_at(phase, 3000 * kMs,
                     [](std::int64_t, std::int64_t) { return std::chrono::nanoseconds(follow_interval(2048)); }) -
        3000 * kMs;
    worst = std::max(worst, late);
  }
  EXPECT_GT(worst, 390 * kMs);
}

TEST(FollowPace, WithoutAHookDueTheLoopSleepsItsPollIntervalAndNeverANegativeTime) {
  EXPECT_EQ(follow_sleep(500ms, std::nullopt, 0), 500ms);
  EXPECT_EQ(follow_sleep(500ms, 2000 * kMs, 0), 500ms);
  EXPECT_EQ(follow_sleep(500ms, 120 * kMs, 0), 120ms);
  EXPECT_EQ(follow_sleep(50ms, 100 * kMs, 200 * kMs), 0ms);  // past due: look at once
}

TEST(FollowPace, NoCheckpointIsWrittenInTheSecondBeforeTheHook) {
  EXPECT_TRUE(checkpoint_clear_of_hook(std::nullopt, 0));
  EXPECT_TRUE(checkpoint_clear_of_hook(1500 * kMs, 0));
  EXPECT_FALSE(checkpoint_clear_of_hook(900 * kMs, 0));
  EXPECT_FALSE(checkpoint_clear_of_hook(0, 0));
}

}  // namespace
}  // namespace tusk::orchestration
