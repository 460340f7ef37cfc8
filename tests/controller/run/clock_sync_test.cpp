#include "controller/run/clock_sync.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace tusk {
namespace {

// Times below are in nanoseconds; 1 ms = 1'000'000 ns.
constexpr std::int64_t kMs = 1'000'000;

proto::ClockEcho echo(std::int64_t t1, std::int64_t t2, std::int64_t t3) {
  proto::ClockEcho e;
  e.set_probe_id(7);
  e.set_controller_send_ns(t1);
  e.set_agent_receive_ns(t2);
  e.set_agent_send_ns(t3);
  return e;
}

ClockSample sample(std::int64_t offset_ns, std::int64_t rtt_ns) {
  ClockSample s;
  s.offset_ns = offset_ns;
  s.rtt_ns = rtt_ns;
  return s;
}

// ---- clock_sample_from -----------------------------------------------------------------------

TEST(ClockSync, AgentAheadWithSymmetricDelayGivesTheExactOffset) {
  // Agent clock = controller clock + 5 ms; 1 ms each way; the agent holds the probe 0.2 ms.
  // Epoch-sized timestamps, as the real clocks produce.
  const std::int64_t t1 = 1'700'000'000'000'000'000;         // controller sends
  const std::int64_t t2 = t1 + 1 * kMs + 5 * kMs;            // arrives after 1 ms; agent reads +5 ms
  const std::int64_t t3 = t2 + kMs / 5;                      // agent answers 0.2 ms later
  const std::int64_t t4 = t1 + 1 * kMs + kMs / 5 + 1 * kMs;  // controller: 1 + 0.2 + 1 = 2.2 ms after t1
  // offset = ((t2 - t1) + (t3 - t4)) / 2 = (6 ms + (6.2 ms - 2.2 ms)) / 2 = (6 + 4) / 2 = 5 ms
  // rtt = (t4 - t1) - (t3 - t2) = 2.2 ms - 0.2 ms = 2 ms
  const auto s = *clock_sample_from(echo(t1, t2, t3), t4);
  EXPECT_EQ(s.offset_ns, 5 * kMs);
  EXPECT_EQ(s.rtt_ns, 2 * kMs);
}

TEST(ClockSync, AgentBehindGivesANegativeOffset) {
  // Agent clock = controller clock - 3 ms; 0.5 ms each way; 0.1 ms processing.
  const std::int64_t t1 = 10'000 * kMs;                                 // controller 10 s
  const std::int64_t t2 = 10'000 * kMs + kMs / 2 - 3 * kMs;             // controller 10.0005 s = agent 9.9975 s
  const std::int64_t t3 = t2 + kMs / 10;                                // agent 9.9976 s
  const std::int64_t t4 = 10'000 * kMs + kMs / 2 + kMs / 10 + kMs / 2;  // controller 10.0011 s
  // offset = (-2.5 ms + (9.9976 s - 10.0011 s)) / 2 = (-2.5 - 3.5) / 2 = -3 ms
  // rtt = 1.1 ms - 0.1 ms = 1 ms
  const auto s = *clock_sample_from(echo(t1, t2, t3), t4);
  EXPECT_EQ(s.offset_ns, -3 * kMs);
  EXPECT_EQ(s.rtt_ns, 1 * kMs);
}

TEST(ClockSync, SameClocksGiveZeroOffset) {
  // Clocks agree; 2 ms each way; 1 ms processing.
  // t1 = 0, t2 = 2, t3 = 3, t4 = 5 (ms): offset = (2 + (3 - 5)) / 2 = 0; rtt = 5 - 1 = 4 ms.
  const auto s = *clock_sample_from(echo(0, 2 * kMs, 3 * kMs), 5 * kMs);
  EXPECT_EQ(s.offset_ns, 0);
  EXPECT_EQ(s.rtt_ns, 4 * kMs);
}

TEST(ClockSync, AsymmetricDelayBiasesTheOffsetByHalfTheAsymmetry) {
  // The method's known limit: it assumes equal delays each way. True offset 5 ms, 3 ms out,
  // 1 ms back, no processing. t1 = 0, t2 = 0 + 3 + 5 = 8, t3 = 8, t4 = 0 + 3 + 1 = 4 (ms).
  // offset = (8 + (8 - 4)) / 2 = 6 ms = true 5 ms + (3 - 1) / 2 ms error.
  // rtt = 4 - 0 = 4 ms, unaffected.
  const auto s = *clock_sample_from(echo(0, 8 * kMs, 8 * kMs), 4 * kMs);
  EXPECT_EQ(s.offset_ns, 6 * kMs);
  EXPECT_EQ(s.rtt_ns, 4 * kMs);

  // The other way round (1 ms out, 3 ms back): t2 = 1 + 5 = 6, t3 = 6, t4 = 4.
  // offset = (6 + (6 - 4)) / 2 = 4 ms = 5 ms - 1 ms.
  const auto back = *clock_sample_from(echo(0, 6 * kMs, 6 * kMs), 4 * kMs);
  EXPECT_EQ(back.offset_ns, 4 * kMs);
  EXPECT_EQ(back.rtt_ns, 4 * kMs);
}

// Every time in an echo but our own receive time is the agent's word: an echo that does not fit
// inside the round trip we measured ourselves is dropped, never clamped into a sample.
TEST(ClockSync, AnEchoWithMoreProcessingThanRoundTripIsDropped) {
  // The agent claims 9.9 us of processing inside a 1 us round trip.
  EXPECT_FALSE(clock_sample_from(echo(0, 100, 10'000), 1'000).has_value());
  // Or answers before it received the probe (t3 < t2): the forged echo that stretched a start.
  EXPECT_FALSE(clock_sample_from(echo(0, 5 * kMs, 1 * kMs), 2 * kMs).has_value());
}

TEST(ClockSync, AnEchoSentInOurFutureOrTooLongAgoIsDropped) {
  const std::int64_t now = 1'700'000'000'000'000'000;
  EXPECT_FALSE(clock_sample_from(echo(now + kMs, now, now), now).has_value());
  EXPECT_FALSE(clock_sample_from(echo(now - kMaxProbeRoundTripNs - 1, now, now), now).has_value());
  EXPECT_TRUE(clock_sample_from(echo(now - kMaxProbeRoundTripNs, now, now), now).has_value());
}

TEST(ClockSync, ExtremeAgentTimesAreDroppedWithoutOverflow) {
  const std::int64_t now = 1'700'000'000'000'000'000;
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_FALSE(clock_sample_from(echo(now - kMs, kMin, kMax), now).has_value());
  EXPECT_FALSE(clock_sample_from(echo(now - kMs, kMax, kMax), now).has_value());
  EXPECT_FALSE(clock_sample_from(echo(kMin, now, now), now).has_value());
  // A clock 31 days off is not a clock; 29 days off is still measured.
  constexpr std::int64_t kDay = 24LL * 3600 * 1'000'000'000;
  EXPECT_FALSE(clock_sample_from(echo(now - kMs, now + 31 * kDay, now + 31 * kDay), now).has_value());
  const auto far = clock_sample_from(echo(now - 2 * kMs, now - kMs + 29 * kDay, now - kMs + 29 * kDay), now);
  ASSERT_TRUE(far.has_value());
  EXPECT_EQ(far->offset_ns, 29 * kDay);
}

// ---- start margin ----------------------------------------------------------------------------

TEST(ClockSync, TheStartMarginIsTwentyRoundTripsAtMostThirtySecondsPlusTimePerAgent) {
  EXPECT_EQ(start_margin_ns(0, 0), 250'000'000);            // at least 250 ms
  EXPECT_EQ(start_margin_ns(10 * kMs, 0), 250'000'000);     // 20 × 10 ms is less
  EXPECT_EQ(start_margin_ns(100 * kMs, 0), 2'000'000'000);  // 20 × 100 ms
  EXPECT_EQ(start_margin_ns(100 * kMs, 4096), 2'000'000'000 + std::int64_t{4096} * 250'000);
  // The slowest agent's round trip puts the start off 30 s at most, whatever it claims.
  EXPECT_EQ(start_margin_ns(kMaxProbeRoundTripNs, 0), kMaxRoundTripMarginNs);
  EXPECT_EQ(start_margin_ns(std::numeric_limits<std::int64_t>::max(), 2), kMaxRoundTripMarginNs + 500'000);
  EXPECT_EQ(start_margin_ns(-5, 0), 250'000'000);
}

TEST(ClockSync, AnEstimateKeepsOneSampleHoweverManyEchoesArrive) {
  ClockEstimate estimate;
  for (int i = 0; i < 100'000; ++i) estimate.add(sample(i, 1'000'000 - i));
  EXPECT_EQ(estimate.count(), 100'000u);
  EXPECT_EQ(estimate.best()->rtt_ns, 1'000'000 - 99'999);
  EXPECT_EQ(sizeof(ClockEstimate), sizeof(std::optional<ClockSample>) + sizeof(std::size_t));
}

// ---- ClockEstimate ---------------------------------------------------------------------------

TEST(ClockSync, EmptyEstimateHasNoBest) {
  ClockEstimate estimate;
  EXPECT_EQ(estimate.count(), 0u);
  EXPECT_FALSE(estimate.best().has_value());
}

TEST(ClockSync, BestIsTheSampleWithTheSmallestRoundTrip) {
  ClockEstimate estimate;
  estimate.add(sample(7 * kMs, 3 * kMs));
  estimate.add(sample(5 * kMs, 1 * kMs));  // least queueing: this one
  estimate.add(sample(-2 * kMs, 2 * kMs));
  EXPECT_EQ(estimate.count(), 3u);
  const auto best = estimate.best();
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->offset_ns, 5 * kMs);
  EXPECT_EQ(best->rtt_ns, 1 * kMs);
}

TEST(ClockSync, BestIsNotTheSmallestOrLatestOffset) {
  // The last sample and the smallest offset both lose to the smallest rtt.
  ClockEstimate estimate;
  estimate.add(sample(100, 500));
  estimate.add(sample(300, 200));
  estimate.add(sample(-900, 900));
  estimate.add(sample(50, 700));
  const auto best = estimate.best();
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->offset_ns, 300);
  EXPECT_EQ(best->rtt_ns, 200);
}

TEST(ClockSync, ASingleSampleIsTheBest) {
  ClockEstimate estimate;
  estimate.add(sample(-42, 9));
  ASSERT_TRUE(estimate.best().has_value());
  EXPECT_EQ(estimate.best()->offset_ns, -42);
  EXPECT_EQ(estimate.best()->rtt_ns, 9);
}

TEST(ClockSync, ClearForgetsAllSamples) {
  ClockEstimate estimate;
  estimate.add(sample(1, 1));
  estimate.add(sample(2, 2));
  estimate.clear();
  EXPECT_EQ(estimate.count(), 0u);
  EXPECT_FALSE(estimate.best().has_value());

  // Samples from before clear() no longer compete: 1 ns rtt is gone, 50 ns wins.
  estimate.add(sample(8, 50));
  ASSERT_TRUE(estimate.best().has_value());
  EXPECT_EQ(estimate.best()->offset_ns, 8);
  EXPECT_EQ(estimate.count(), 1u);
}

TEST(ClockSync, EstimateFromEchoesPicksTheLeastQueuedExchange) {
  // Agent ahead by 5 ms. Exchange A: 1 ms each way (rtt 2 ms, exact offset). Exchange B: 4 ms
  // out, 1 ms back (rtt 5 ms, offset biased by (4 - 1) / 2 = 1.5 ms to 6.5 ms).
  ClockEstimate estimate;
  // B: t1 = 0, t2 = 4 + 5 = 9, t3 = 9, t4 = 5 -> offset (9 + 4) / 2 = 6.5 ms, rtt 5 ms.
  estimate.add(*clock_sample_from(echo(0, 9 * kMs, 9 * kMs), 5 * kMs));
  // A: t1 = 100, t2 = 106, t3 = 106, t4 = 102 -> offset (6 + 4) / 2 = 5 ms, rtt 2 ms.
  estimate.add(*clock_sample_from(echo(100 * kMs, 106 * kMs, 106 * kMs), 102 * kMs));
  const auto best = estimate.best();
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->offset_ns, 5 * kMs);
  EXPECT_EQ(best->rtt_ns, 2 * kMs);
}

}  // namespace
}  // namespace tusk
