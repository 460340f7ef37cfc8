// A port's optics read every interval of a long test: one timeline a port, flat however long the
// test, saying in how many intervals it erred, when the first began and what the worst was.
#include "controller/verdict/optics_timeline.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/optics_port.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kOneSecond = 1'000'000'000;
constexpr std::int64_t kTimelineStart = 1'800'000'000 * kOneSecond;  // 2027-01-15T08:00:00Z

PortOpticsOutcome judged_at(double celsius) {
  OpticsThresholds thresholds;
  thresholds.max_module_temp_c = 70;
  return judge_port_optics("lab-a", testing::port_at_temperature("p0", celsius), thresholds);
}

TEST(OpticsTimeline, CountsEachIntervalAndKeepsTheFirstAndTheWorstFinding) {
  OpticsTimeline timeline;
  add_optics_interval(timeline, judged_at(40), kTimelineStart + 1 * kOneSecond, kOneSecond);
  EXPECT_EQ(timeline.intervals, 1u);
  EXPECT_EQ(timeline.with_findings, 0u);
  EXPECT_THAT(optics_timeline_text(timeline), HasSubstr("no findings in 1 interval"));
  // The module's own warning first (a temperature past a threshold of the module's own: none here,
  // so the profile's failure is the first finding), then a hotter interval.
  add_optics_interval(timeline, judged_at(75), kTimelineStart + 2 * kOneSecond, kOneSecond);
  add_optics_interval(timeline, judged_at(40), kTimelineStart + 3 * kOneSecond, kOneSecond);
  add_optics_interval(timeline, judged_at(90), kTimelineStart + 4 * kOneSecond, kOneSecond);
  EXPECT_EQ(timeline.agent, "lab-a");
  EXPECT_EQ(timeline.port, "p0");
  EXPECT_EQ(timeline.intervals, 4u);
  EXPECT_EQ(timeline.with_findings, 2u);
  EXPECT_EQ(timeline.failing, 2u);
  EXPECT_EQ(timeline.first_start_ns, kTimelineStart + 1 * kOneSecond);
  EXPECT_EQ(timeline.first_end_ns, kTimelineStart + 2 * kOneSecond);
  EXPECT_EQ(timeline.failing_end_ns, kTimelineStart + 2 * kOneSecond);
  EXPECT_EQ(timeline.last_end_ns, kTimelineStart + 4 * kOneSecond);
  EXPECT_THAT(timeline.first_text, HasSubstr("75"));
  EXPECT_EQ(timeline.worst_text, timeline.first_text) << "the first failing interval's";
  const std::string text = optics_timeline_text(timeline);
  EXPECT_THAT(text, HasSubstr("failing in 2 of 4 intervals, the first from 2027-01-15T08:00:01.000Z to "
                              "2027-01-15T08:00:02.000Z"));
}

TEST(OpticsTimeline, WarningsBeforeTheFirstFailureAreSaidAfterIt) {
  OpticsThresholds thresholds;
  thresholds.max_module_temp_c = 70;
  OpticsTimeline timeline;
  // The module's own high-temperature warning latched from the start; the profile's limit crossed later.
  proto::PortOptics warm = testing::port_at_temperature("p0", 60);
  ModuleReading module = module_from_proto(warm.module());
  module.flags_raised.push_back({ModuleQuantity::temperature, ModuleLimit::high_warning, std::nullopt});
  to_proto(module, *warm.mutable_module());
  add_optics_interval(timeline, judge_port_optics("a", warm, thresholds), kTimelineStart + kOneSecond, kOneSecond);
  add_optics_interval(timeline, judge_port_optics("a", testing::port_at_temperature("p0", 80), thresholds),
                      kTimelineStart + 2 * kOneSecond, kOneSecond);
  EXPECT_EQ(timeline.with_findings, 2u);
  EXPECT_EQ(timeline.failing, 1u);
  EXPECT_EQ(timeline.first_end_ns, kTimelineStart + kOneSecond);
  EXPECT_EQ(timeline.failing_end_ns, kTimelineStart + 2 * kOneSecond);
  EXPECT_THAT(optics_timeline_text(timeline),
              HasSubstr("failing in 1 of 2 intervals, the first from 2027-01-15T08:00:01.000Z to "
                        "2027-01-15T08:00:02.000Z"));
  EXPECT_THAT(optics_timeline_text(timeline), HasSubstr("; warnings from 2027-01-15T08:00:00.000Z: "));
}

TEST(OpticsTimeline, AnIntervalWithoutFecCountersIsNotAFinding) {
  OpticsThresholds thresholds;
  thresholds.max_pre_fec_ber = 1e-5;  // asks for FEC; the port has none
  OpticsTimeline timeline;
  add_optics_interval(timeline, judge_port_optics("a", testing::port_at_temperature("p0", 40), thresholds),
                      kTimelineStart, kOneSecond);
  EXPECT_EQ(timeline.with_findings, 0u) << "that FEC was not judged is the whole test's to say";
}

TEST(OpticsTimeline, AHostileEndOrIntervalCannotUnderflowTheStart) {
  OpticsTimeline timeline;
  add_optics_interval(timeline, judged_at(90), 5, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(timeline.first_start_ns, 0);
  EXPECT_EQ(timeline.failing_start_ns, 0);
  OpticsTimeline negative;
  add_optics_interval(negative, judged_at(90), -kOneSecond, kOneSecond);
  EXPECT_EQ(negative.first_start_ns, 0);
}

TEST(OpticsTimeline, AMethodsStepsMergeIntoOneTimelineAPort) {
  OpticsTimeline first, second;
  add_optics_interval(first, judged_at(40), kTimelineStart + kOneSecond, kOneSecond);
  add_optics_interval(second, judged_at(75), kTimelineStart + 10 * kOneSecond, kOneSecond);
  add_optics_interval(second, judged_at(40), kTimelineStart + 11 * kOneSecond, kOneSecond);
  OpticsTimeline merged;
  merge_optics_timeline(merged, first);
  merge_optics_timeline(merged, second);
  EXPECT_EQ(merged.intervals, 3u);
  EXPECT_EQ(merged.with_findings, 1u);
  EXPECT_EQ(merged.failing, 1u);
  EXPECT_EQ(merged.first_end_ns, kTimelineStart + 10 * kOneSecond);
  EXPECT_EQ(merged.failing_end_ns, kTimelineStart + 10 * kOneSecond);
  EXPECT_EQ(merged.worst_text, second.worst_text);
  EXPECT_THAT(optics_timeline_summary({merged}),
              HasSubstr("1 port read in up to 3 intervals, 1 with findings, 1 failing, the first failure on lab-a "
                        "eth-p0 (p0) in the interval ending 2027-01-15T08:00:10.000Z"));
  EXPECT_EQ(optics_timeline_summary({}), "");
}

}  // namespace
}  // namespace tusk
