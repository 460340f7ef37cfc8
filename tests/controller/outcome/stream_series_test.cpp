// A stream's series kept in at most kMaxSeriesBins bins: exact totals, aligned bins, the worst
// interval kept, and the same size after a day of samples as after a minute.
#include "controller/outcome/stream_series.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>

#include "controller/outcome/sample_set.hpp"
#include "tests/support/named_sample.hpp"

namespace tusk {
namespace {

// A stream's cumulative counters after `index` samples of 100 ms, each of 1250 bytes (100 kbit/s),
// one frame lost every 7th sample.
proto::StreamCounters cumulative(std::uint32_t index, std::uint64_t bytes_per_sample = 1250) {
  proto::StreamCounters stream;
  stream.set_stream_id("rx:a/1");
  (*stream.mutable_counters())["rx_bytes"] = bytes_per_sample * index;
  (*stream.mutable_counters())["lost_frames"] = index / 7;
  (*stream.mutable_counters())["retransmits"] = 0;
  return stream;
}

// The width of the bins after `samples` samples: the least power of two that fits them in
// kMaxSeriesBins.
std::uint32_t width_for(std::uint32_t samples) {
  std::uint32_t width = 1;
  while ((samples + width - 1) / width > kMaxSeriesBins) width *= 2;
  return width;
}

template <typename Field>
std::uint64_t total(const std::vector<SeriesBin>& bins, Field SeriesBin::*field) {
  return std::accumulate(bins.begin(), bins.end(), std::uint64_t{0},
                         [&](std::uint64_t sum, const SeriesBin& bin) { return sum + bin.*field; });
}

TEST(StreamSeries, AShortSeriesHasABinPerSample) {
  StreamSeries series;
  for (std::uint32_t i = 1; i <= 10; ++i) EXPECT_TRUE(testing::add_named(series, i, i * 100, cumulative(i)));
  ASSERT_EQ(series.bins().size(), 10u);
  EXPECT_EQ(series.width(), 1u);
  EXPECT_EQ(series.bins()[6].lost, 1u) << "sample 7 lost the 1st frame";
  EXPECT_EQ(series.bins()[0].bytes, 1250u);
  EXPECT_NEAR(*series.bins()[3].throughput_bps(), 100'000, 1e-6);
  EXPECT_EQ(series.latest_counter("rx_bytes"), 12'500u);
}

TEST(StreamSeries, ADaysSamplesFoldIntoTheSameBinsWithExactTotals) {
  StreamSeries series;
  const std::uint32_t samples = 864'000;  // 24 h of 100 ms samples
  for (std::uint32_t i = 1; i <= samples; ++i) testing::add_named(series, i, std::uint64_t{i} * 100, cumulative(i));
  EXPECT_LE(series.bins().size(), kMaxSeriesBins);
  EXPECT_GT(series.bins().size(), kMaxSeriesBins / 2);
  EXPECT_EQ(series.bins().capacity(), kMaxSeriesBins) << "the bins never grow past their first allocation";
  EXPECT_EQ(total(series.bins(), &SeriesBin::bytes), 1250ull * samples);
  EXPECT_EQ(total(series.bins(), &SeriesBin::lost), samples / 7);
  EXPECT_EQ(total(series.bins(), &SeriesBin::span_ms), std::uint64_t{samples} * 100);
  std::uint64_t counted = 0;
  for (const auto& bin : series.bins()) counted += bin.samples;
  EXPECT_EQ(counted, samples);
  // Aligned: bin k covers samples k*width+1 .. (k+1)*width.
  for (std::size_t k = 0; k + 1 < series.bins().size(); ++k) {
    EXPECT_EQ(series.bins()[k].last_index, (k + 1) * series.width()) << k;
  }
}

TEST(StreamSeries, ABinKeepsItsSlowestIntervalAndItsAverage) {
  StreamSeries series;
  std::uint64_t bytes = 0;
  for (std::uint32_t i = 1; i <= 1000; ++i) {
    bytes += i == 500 ? 0 : 1250;  // one interval of nothing: a 100 ms flap
    auto now = cumulative(i);
    (*now.mutable_counters())["rx_bytes"] = bytes;
    testing::add_named(series, i, i * 100, std::move(now));
  }
  const std::uint32_t width = width_for(1000);
  ASSERT_GT(width, 1u);
  ASSERT_EQ(series.width(), width);
  const SeriesBin& with_flap = series.bins()[(500 - 1) / width];
  EXPECT_EQ(with_flap.min_throughput_bps, 0.0f) << "the flap's interval is the bin's worst";
  EXPECT_NEAR(*with_flap.throughput_bps(), 100'000.0 * (width - 1) / width, 1e-6);
  EXPECT_NEAR(series.bins()[0].min_throughput_bps, 100'000.0f, 1.0f);
}

TEST(StreamSeries, AMissingSampleLeavesItsIntervalToTheNextAndALateOneAddsNothing) {
  StreamSeries series;
  testing::add_named(series, 1, 100, cumulative(1));
  testing::add_named(series, 3, 300, cumulative(3));
  EXPECT_FALSE(testing::add_named(series, 2, 200, cumulative(2))) << "sample 3's deltas already hold it";
  EXPECT_FALSE(testing::add_named(series, 3, 300, cumulative(3))) << "a retry";
  ASSERT_EQ(series.bins().size(), 3u);
  EXPECT_EQ(series.bins()[1].samples, 0u);
  EXPECT_EQ(series.bins()[2].bytes, 2500u);
  EXPECT_EQ(series.bins()[2].span_ms, 200u);
  EXPECT_EQ(total(series.bins(), &SeriesBin::bytes), 3750u);
}

TEST(StreamSeries, BinsOfTwoWidthsMeetAtTheWiderOne) {
  StreamSeries long_one, short_one;
  for (std::uint32_t i = 1; i <= 1000; ++i) testing::add_named(long_one, i, i * 100, cumulative(i));
  for (std::uint32_t i = 1; i <= 200; ++i) testing::add_named(short_one, i, i * 100, cumulative(i));
  ASSERT_EQ(long_one.width(), width_for(1000));
  ASSERT_EQ(short_one.width(), width_for(200));
  ASSERT_LT(short_one.width(), long_one.width());
  const auto merged = short_one.bins_at(long_one.width());
  ASSERT_EQ(merged.size(), (200 + long_one.width() - 1) / long_one.width());
  // Every bin the short one filled is the long one's (its last may hold fewer samples).
  for (std::size_t k = 0; (k + 1) * long_one.width() <= 200; ++k) {
    EXPECT_EQ(merged[k].last_index, long_one.bins()[k].last_index) << k;
    EXPECT_EQ(merged[k].bytes, long_one.bins()[k].bytes) << k;
  }
}

TEST(StreamSeries, ATrainingReplaysSlowestStepIsKept) {
  StreamSeries series;
  for (std::uint32_t i = 1; i <= 4; ++i) {
    proto::StreamCounters now;
    (*now.mutable_counters())["steps_done"] = i;
    // Steps of 10 ms, the third of 40 ms: the running mean the agent reports.
    const double total_ns = (i >= 3 ? 20e6 + 40e6 : 10e6 * i) + (i == 4 ? 10e6 : 0);
    (*now.mutable_gauges())["step_time_mean_ns"] = total_ns / i;
    testing::add_named(series, i, i * 1000, std::move(now));
  }
  EXPECT_NEAR(series.bins()[2].max_step_time_ns, 40e6, 1);
  EXPECT_NEAR(series.bins()[3].max_step_time_ns, 10e6, 1);
}

// A minute of 100 ms samples at 1 Mbit/s with a 2 s flap at 40 s (nothing moved, 5 frames lost),
// judged in 10 s windows on min_throughput and max_lost_frames.
WindowTally judged_minute() {
  StreamSeries series;
  series.windows.window = std::chrono::seconds(10);
  series.windows.samples_per_window = 100;
  series.windows.thresholds = {Threshold{"min_throughput", "throughput_bps", Bound::Min, 900'000, {}, false},
                               Threshold{"max_lost_frames", "lost_frames", Bound::Max, 0, {}, true}};
  std::uint64_t bytes = 0, lost = 0;
  for (std::uint32_t i = 1; i <= 600; ++i) {
    const bool flapping = i > 400 && i <= 420;
    bytes += flapping ? 0 : 12'500;
    lost += i == 410 ? 5 : 0;
    proto::StreamCounters now;
    (*now.mutable_counters())["rx_bytes"] = bytes;
    (*now.mutable_counters())["lost_frames"] = lost;
    testing::add_named(series, i, i * 100ull, now);
  }
  series.windows.close();
  return series.windows;
}

TEST(WindowTally, OnlyTheWindowsThatHoldAFlapFailAndTheFirstAndWorstAreNamed) {
  const WindowTally windows = judged_minute();
  EXPECT_EQ(windows.judged, 6u);
  EXPECT_EQ(windows.failed, 1u) << "40-50 s holds the whole flap";
  ASSERT_TRUE(windows.first);
  EXPECT_EQ(windows.first->window, 4u);
  EXPECT_EQ(windows.first->start_ms, 40'000u);
  EXPECT_NE(windows.first->text.find("lost_frames 5 > max 0"), std::string::npos) << windows.first->text;
  EXPECT_NE(windows.first->text.find("throughput_bps 800000 < min 900000"), std::string::npos) << windows.first->text;
  EXPECT_EQ(windows.failed_by_threshold, (std::vector<std::uint32_t>{1, 1}));
  ASSERT_TRUE(windows.throughput_cv());
  EXPECT_NEAR(*windows.throughput_cv(), 0.0845, 0.0005) << "five windows at 1 Mbit/s, one at 0.8";
}

TEST(WindowTally, OnlyCountsOfAStreamsCountersAndMinThroughputAreJudgedPerWindow) {
  EXPECT_TRUE(judged_per_window(Threshold{"max_lost_frames", "lost_frames", Bound::Max, 0, {}, false}));
  EXPECT_TRUE(judged_per_window(Threshold{"min_throughput", "throughput_bps", Bound::Min, 1, {}, false}));
  EXPECT_FALSE(judged_per_window(Threshold{"max_ber", "ber", Bound::Max, 1e-12, {}, false}));
  EXPECT_FALSE(judged_per_window(Threshold{"max_latency_p99", "latency_p99_ns", Bound::Max, 1e4, {}, false}));
  EXPECT_FALSE(judged_per_window(Threshold{"max_agents_lost", "agents_lost", Bound::Max, 0, {}, false}));
}

TEST(SampleSet, SaysWhatArrivedAsRuns) {
  SampleSet set;
  for (std::uint32_t i : {1u, 2u, 3u, 5u, 9u, 10u}) EXPECT_TRUE(set.insert(i));
  EXPECT_FALSE(set.insert(2));
  EXPECT_FALSE(set.insert(0));
  EXPECT_EQ(set.size(), 6u);
  EXPECT_EQ(set.highest(), 10u);
  std::size_t more = 0;
  using Runs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  EXPECT_EQ(set.ranges(10, more), (Runs{{1, 3}, {5, 5}, {9, 10}}));
  EXPECT_EQ(more, 0u);
  EXPECT_EQ(set.ranges(1, more), (Runs{{1, 3}}));
  EXPECT_EQ(more, 2u);
}

// A day of 100 ms samples that all arrived (some late, as retries bring them) costs what a minute
// does; a sample that never came keeps the set exact from there on.
TEST(SampleSet, AnAgentThatMissesNothingCostsAWordOrTwoAfterADay) {
  SampleSet set;
  constexpr std::uint32_t kDay = 864'000;
  for (std::uint32_t i = 1; i <= kDay; i += 2) {
    set.insert(i + 1);  // each pair out of order
    set.insert(i);
  }
  EXPECT_EQ(set.size(), kDay);
  EXPECT_LE(set.words_held(), 1u);
  EXPECT_TRUE(set.contains(1));
  EXPECT_TRUE(set.contains(kDay));
  EXPECT_FALSE(set.contains(kDay + 1));
  EXPECT_FALSE(set.insert(12'345)) << "long counted, still a duplicate";
  std::size_t more = 0;
  using Runs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  EXPECT_EQ(set.ranges(10, more), (Runs{{1, kDay}}));

  SampleSet gap;
  for (std::uint32_t i = 1; i <= 1000; ++i) {
    if (i != 100) gap.insert(i);
  }
  EXPECT_FALSE(gap.contains(100));
  EXPECT_TRUE(gap.contains(99));
  EXPECT_TRUE(gap.contains(101));
  EXPECT_EQ(gap.ranges(10, more), (Runs{{1, 99}, {101, 1000}}));
  EXPECT_TRUE(gap.insert(100)) << "the late one";
  EXPECT_EQ(gap.ranges(10, more), (Runs{{1, 1000}}));
  EXPECT_LE(gap.words_held(), 1u);
}

}  // namespace
}  // namespace tusk
