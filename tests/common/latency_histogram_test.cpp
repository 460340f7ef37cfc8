#include "common/latency_histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <thread>
#include <vector>

namespace tusk {
namespace {

// The nearest-rank percentile of sorted samples, in integer arithmetic: percent in tenths.
std::uint64_t exact_percentile(const std::vector<std::uint64_t>& sorted, std::uint64_t tenths) {
  const std::uint64_t rank = std::max<std::uint64_t>(1, (tenths * sorted.size() + 999) / 1000);
  return sorted[rank - 1];
}

void expect_within_bound(std::uint64_t estimate, std::uint64_t exact, const char* what) {
  // The documented bound: within exact / 128, and exact below 128 ns.
  const double allowed = exact < LatencyHistogram::kExactBelowNs ? 0.0 : exact / 128.0;
  EXPECT_LE(std::fabs(static_cast<double>(estimate) - static_cast<double>(exact)), allowed)
      << what << ": estimate " << estimate << ", exact " << exact;
}

TEST(LatencyHistogram, BucketsTileTheRangeWithoutGapsOrOverlaps) {
  EXPECT_EQ(LatencyHistogram::kBucketCount, 2048u);
  EXPECT_EQ(LatencyHistogram::lowest_in_bucket(0), 0u);
  for (std::size_t b = 1; b < LatencyHistogram::kBucketCount; ++b) {
    ASSERT_EQ(LatencyHistogram::lowest_in_bucket(b), LatencyHistogram::highest_in_bucket(b - 1) + 1) << b;
    const std::uint64_t low = LatencyHistogram::lowest_in_bucket(b);
    const std::uint64_t high = LatencyHistogram::highest_in_bucket(b);
    ASSERT_EQ(LatencyHistogram::bucket_of(low), b);
    ASSERT_EQ(LatencyHistogram::bucket_of(high), b);
    // No bucket is wider than 1/64 of its lowest value (above the exact range).
    if (low >= LatencyHistogram::kExactBelowNs) {
      ASSERT_LE((high - low + 1) * 64, low) << b;
    }
  }
  EXPECT_EQ(LatencyHistogram::highest_in_bucket(LatencyHistogram::kBucketCount - 1),
            LatencyHistogram::kHighestTrackableNs);
  EXPECT_EQ(LatencyHistogram::bucket_of(~std::uint64_t{0}), LatencyHistogram::kBucketCount - 1);
}

TEST(LatencyHistogram, EmptyReportsZeros) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min_ns(), 0u);
  EXPECT_EQ(h.max_ns(), 0u);
  EXPECT_EQ(h.value_at_percentile(99), 0u);
  EXPECT_EQ(h.summary(), LatencySummary{});
}

TEST(LatencyHistogram, SmallValuesAreExact) {
  LatencyHistogram h;
  for (std::uint64_t v = 1; v <= 100; ++v) h.record(v);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.min_ns(), 1u);
  EXPECT_EQ(h.max_ns(), 100u);
  EXPECT_EQ(h.value_at_percentile(50), 50u);
  EXPECT_EQ(h.value_at_percentile(99), 99u);
  EXPECT_EQ(h.value_at_percentile(99.9), 100u);
  EXPECT_EQ(h.value_at_percentile(0), 1u);
  EXPECT_EQ(h.value_at_percentile(100), 100u);
  EXPECT_DOUBLE_EQ(h.mean_ns(), 50.5);
}

TEST(LatencyHistogram, PercentileRanksNeedNoRoundingLuck) {
  // 99.9 % of 1000 is rank 999: the 999th sample, not the 1000th.
  LatencyHistogram h;
  for (int i = 0; i < 999; ++i) h.record(10);
  h.record(100);
  EXPECT_EQ(h.value_at_percentile(99.9), 10u);
  EXPECT_EQ(h.summary().p999_ns, 10u);
}

TEST(LatencyHistogram, PercentilesOfKnownDistributionsAreWithinTheDocumentedBound) {
  std::mt19937_64 random(42);
  std::lognormal_distribution<double> lognormal(std::log(20'000.0), 1.0);  // ~20 us, long tail
  std::uniform_int_distribution<std::uint64_t> uniform(1, 5'000'000'000);  // 1 ns .. 5 s
  std::exponential_distribution<double> exponential(1.0 / 800.0);          // ~800 ns
  for (int shape = 0; shape < 3; ++shape) {
    auto h = std::make_unique<LatencyHistogram>();
    std::vector<std::uint64_t> samples;
    for (int i = 0; i < 100'000; ++i) {
      std::uint64_t v = 0;
      if (shape == 0) v = static_cast<std::uint64_t>(lognormal(random));
      if (shape == 1) v = uniform(random);
      if (shape == 2) v = static_cast<std::uint64_t>(exponential(random));
      samples.push_back(v);
      h->record(v);
    }
    std::sort(samples.begin(), samples.end());
    const LatencySummary s = h->summary();
    EXPECT_EQ(s.count, samples.size());
    EXPECT_EQ(s.min_ns, samples.front());
    EXPECT_EQ(s.max_ns, samples.back());
    expect_within_bound(s.p50_ns, exact_percentile(samples, 500), "p50");
    expect_within_bound(s.p99_ns, exact_percentile(samples, 990), "p99");
    expect_within_bound(s.p999_ns, exact_percentile(samples, 999), "p99.9");
    for (std::uint64_t tenths : {1u, 100u, 250u, 750u, 900u, 995u}) {
      expect_within_bound(h->value_at_percentile(tenths / 10.0), exact_percentile(samples, tenths), "percentile");
    }
    double sum = 0;
    for (auto v : samples) sum += static_cast<double>(v);
    EXPECT_NEAR(s.mean_ns, sum / samples.size(), 1e-6 * sum / samples.size());
  }
}

TEST(LatencyHistogram, MergeEqualsRecordingEverythingInOne) {
  auto a = std::make_unique<LatencyHistogram>();
  auto b = std::make_unique<LatencyHistogram>();
  auto both = std::make_unique<LatencyHistogram>();
  std::mt19937_64 random(7);
  for (int i = 0; i < 10'000; ++i) {
    const std::uint64_t v = random() % 1'000'000;
    (i % 3 ? *a : *b).record(v);
    both->record(v);
  }
  a->merge(*b);
  EXPECT_EQ(a->summary(), both->summary());
  a->merge(LatencyHistogram());  // merging an empty one changes nothing, min included
  EXPECT_EQ(a->summary(), both->summary());
}

TEST(LatencyHistogram, ValuesBeyondTheRangeLandInTheTopBucketAndMaxStaysExact) {
  LatencyHistogram h;
  h.record(1'000);
  h.record(500'000'000'000);  // 500 s
  EXPECT_EQ(h.max_ns(), 500'000'000'000u);
  EXPECT_EQ(h.value_at_percentile(100), 500'000'000'000u);
  EXPECT_GE(h.value_at_percentile(99), LatencyHistogram::lowest_in_bucket(LatencyHistogram::kBucketCount - 1));
}

TEST(LatencyHistogram, NegativeDifferencesAreRecordedAsZeroAndSaidSo) {
  LatencyHistogram h;
  EXPECT_FALSE(h.record_clamped(1'500));
  EXPECT_TRUE(h.record_clamped(-20'000));  // the receiver's clock is behind the sender's
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.min_ns(), 0u);
  EXPECT_EQ(h.max_ns(), 1'500u);
}

TEST(LatencyHistogram, ClearForgetsEverything) {
  LatencyHistogram h;
  h.record(5);
  h.record(5'000);
  h.clear();
  EXPECT_EQ(h.summary(), LatencySummary{});
  h.record(7);
  EXPECT_EQ(h.min_ns(), 7u);
}

TEST(PublishedLatency, AReaderNeverSeesHalfOfOnePublicationAndHalfOfAnother) {
  PublishedLatency published;
  EXPECT_EQ(published.read(), LatencySummary{});
  constexpr std::uint64_t kPublications = 200'000;
  std::thread writer([&] {
    for (std::uint64_t i = 1; i <= kPublications; ++i) {
      published.publish({i, i, i, i, i, i, static_cast<double>(i)});
    }
  });
  std::uint64_t last = 0;
  while (last < kPublications) {
    const LatencySummary s = published.read();
    ASSERT_EQ(s, (LatencySummary{s.count, s.count, s.count, s.count, s.count, s.count, static_cast<double>(s.count)}));
    ASSERT_GE(s.count, last) << "publications are seen in order";
    last = s.count;
  }
  writer.join();
}

}  // namespace
}  // namespace tusk
