// The series file's packing (series_codec.hpp): what is packed reads back exactly, whatever the
// values do (counters that go back, gauges that are no number), and a blob that lies throws a
// SeriesDecodeError instead of reading past itself.
#include "controller/series/series_codec.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace tusk {
namespace {

TEST(SeriesCodec, AFullRowReadsBackEverySampleExactlyWhateverItsValuesDo) {
  std::mt19937_64 random(7);
  FullRowEncoder encoder;
  std::vector<SeriesSample> written;
  for (std::uint32_t s = 0; s < 50; ++s) {
    SeriesSample sample;
    sample.sample = 100 + s * (s % 3 == 0 ? 1 : 2);  // gaps between indexes
    sample.elapsed_ms = 10'000 + s * 100;
    sample.agent_time_ns = s == 7 ? -5 : static_cast<std::int64_t>(random());  // a clock anywhere
    // A counter that grows, one that an agent took back, one at the top of 64 bits, one that stands.
    sample.counters = {s * 1'250'000ull, s == 20 ? 3ull : s * 10ull, UINT64_MAX - (s % 2), 42};
    const double nan = std::numeric_limits<double>::quiet_NaN();
    sample.gauges = {s % 5 == 0 ? nan : 1000.5 * s, 9000.0, s == 3 ? std::numeric_limits<double>::infinity() : -1.25};
    encoder.add(sample.sample, sample.elapsed_ms, sample.agent_time_ns, sample.counters, sample.gauges);
    written.push_back(sample);
  }
  const auto read = decode_full_row(encoder.blob(), encoder.samples(), 4, 3);
  ASSERT_EQ(read.size(), written.size());
  for (std::size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].sample, written[i].sample) << i;
    EXPECT_EQ(read[i].elapsed_ms, written[i].elapsed_ms) << i;
    EXPECT_EQ(read[i].agent_time_ns, written[i].agent_time_ns) << i;
    EXPECT_EQ(read[i].counters, written[i].counters) << i;
    for (std::size_t g = 0; g < 3; ++g) {
      if (std::isnan(written[i].gauges[g])) {
        EXPECT_TRUE(std::isnan(read[i].gauges[g])) << i;
      } else {
        EXPECT_EQ(read[i].gauges[g], written[i].gauges[g]) << i << " " << g;
      }
    }
  }
  // A steady stream's sample costs its changes, not its values: a few bytes a counter.
  EXPECT_LT(encoder.blob().size(), 50u * (3 + 4 * 3 + 1 + 8 + 8 + 10));
}

// What a night's file is made of: a steady stream's sample (its counters at a steady rate, its
// gauges standing) is its flag byte; a clock's jitter or a counter off its rate costs its change.
TEST(SeriesCodec, ASteadyStreamsSampleIsAByteOrTwo) {
  FullRowEncoder encoder;
  std::vector<std::uint64_t> counters(20, 0);
  const std::vector<double> gauges{1500, 4096};
  for (std::uint32_t s = 1; s <= 64; ++s) {
    counters[0] += 12'500'000;      // bytes at 1 Gbit/s, 100 ms samples
    counters[1] += 1'250;           // frames
    if (s == 40) counters[5] += 3;  // a loss
    encoder.add(s, s * 100ull, 1'795'000'000'000'000'000 + s * 100'000'000ll + (s % 2) * 3'000, counters, gauges);
  }
  EXPECT_LT(encoder.blob().size(), 64u * 8) << "the agent clock's jitter and the loss included";
  const auto read = decode_full_row(encoder.blob(), 64, 20, 2);
  EXPECT_EQ(read.back().counters[0], 64 * 12'500'000ull);
  EXPECT_EQ(read.back().counters[5], 3u);
  EXPECT_EQ(read[38].counters[5], 0u);
  FullRowEncoder steady;
  std::fill(counters.begin(), counters.end(), 0);
  for (std::uint32_t s = 1; s <= 64; ++s) {
    counters[0] += 12'500'000;
    steady.add(s, s * 100ull, s * 100'000'000ll, counters, gauges);
  }
  EXPECT_LT(steady.blob().size(), 64u + 64) << "a flag byte a sample, and the first two samples' steps";
}

TEST(SeriesCodec, ABlobThatLiesThrowsAndNeverReadsPastItself) {
  FullRowEncoder encoder;
  const std::vector<std::uint64_t> counters{1, 2, 3};
  const std::vector<double> gauges{1.5};
  for (std::uint32_t s = 1; s <= 4; ++s) encoder.add(s, s * 100, s, counters, gauges);
  const std::string blob = encoder.blob();
  // Cut anywhere: too short.
  for (std::size_t cut = 0; cut < blob.size(); ++cut) {
    EXPECT_THROW(decode_full_row(std::string_view(blob).substr(0, cut), 4, 3, 1), SeriesDecodeError) << cut;
  }
  EXPECT_THROW(decode_full_row(blob, 3, 3, 1), SeriesDecodeError) << "bytes left over";
  EXPECT_THROW(decode_full_row(blob, 4'000'000'000u, 3, 1), SeriesDecodeError) << "more samples than bytes";
  EXPECT_THROW(decode_full_row(blob, 4, 1 << 20, 1), SeriesDecodeError) << "a layout no file has";
  EXPECT_THROW(decode_full_row(std::string(12, '\xff'), 1, 1, 0), SeriesDecodeError) << "a varint past 64 bits";
  EXPECT_THROW(decode_rollup(std::string(3, '\x01'), 2, 2, nullptr), SeriesDecodeError);
  // Random bytes: thrown or read, never a crash (the sanitizer builds run this too).
  std::mt19937 random(3);
  for (int round = 0; round < 2000; ++round) {
    std::string noise(random() % 64, '\0');
    for (auto& c : noise) c = static_cast<char>(random());
    try {
      decode_full_row(noise, random() % 8, random() % 6, random() % 4);
    } catch (const SeriesDecodeError&) {
    }
    try {
      SeriesRollup before;
      before.gauges.resize(3);
      decode_rollup(noise, random() % 6, random() % 4, round % 2 ? &before : nullptr);
    } catch (const SeriesDecodeError&) {
    }
  }
}

// A minute: each counter's change over it (from the minute before's last value), the least and
// most it changed between two samples; each gauge's least, most, mean and last; a gauge that
// stood at its last value packs as its count alone.
TEST(SeriesCodec, AMinuteRollsUpItsSamplesAndTheNextGoesOnFromItsLastValues) {
  RollupAccumulator minute;
  minute.reset(2, 2);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Minute 0: samples at 1 s; bytes grow 1000, 3000, 2000; losses 0, 0, 5.
  const std::vector<std::vector<std::uint64_t>> counters{{1000, 0}, {2000, 0}, {5000, 0}, {7000, 5}};
  const std::vector<std::vector<double>> gauges{{10, 4}, {30, 4}, {nan, 4}, {20, 4}};
  for (std::size_t s = 0; s < counters.size(); ++s) minute.add(1000 * (s + 1), counters[s], gauges[s]);
  const std::string first = minute.take();
  const SeriesRollup one = decode_rollup(first, 2, 2, nullptr);
  EXPECT_TRUE(one.absolute);
  EXPECT_EQ(one.samples, 4u);
  EXPECT_EQ(one.first_ms, 1000u);
  EXPECT_EQ(one.last_ms, 4000u);
  EXPECT_EQ(one.counters[0].sum, 7000) << "from zero: the stream's first minute";
  EXPECT_EQ(one.counters[0].min, 1000);
  EXPECT_EQ(one.counters[0].max, 3000);
  EXPECT_EQ(one.counters[1].sum, 5);
  EXPECT_EQ(one.counters[1].max, 5);
  EXPECT_EQ(one.gauges[0].count, 3u) << "the NaN is no number";
  EXPECT_EQ(one.gauges[0].min, 10);
  EXPECT_EQ(one.gauges[0].max, 30);
  EXPECT_EQ(one.gauges[0].mean, 20);
  EXPECT_EQ(one.gauges[0].last, 20);
  EXPECT_EQ(one.gauges[1].last, 4);

  // Minute 1: bytes from 7000 on; the second gauge stands at 4 (its count alone); losses stand.
  minute.add(61'000, std::vector<std::uint64_t>{8000, 5}, std::vector<double>{25, 4});
  minute.add(62'000, std::vector<std::uint64_t>{8500, 5}, std::vector<double>{15, 4});
  const std::string second = minute.take();
  const SeriesRollup two = decode_rollup(second, 2, 2, &one);
  EXPECT_FALSE(two.absolute);
  EXPECT_EQ(two.counters[0].sum, 1500) << "from the last value of the minute before";
  EXPECT_EQ(two.counters[0].min, 500);
  EXPECT_EQ(two.counters[0].max, 1000);
  EXPECT_EQ(two.counters[1].sum, 0);
  EXPECT_EQ(two.gauges[1].count, 2u);
  EXPECT_EQ(two.gauges[1].last, 4);
  EXPECT_EQ(two.gauges[0].mean, 20);
  EXPECT_THROW(decode_rollup(second, 2, 2, nullptr), SeriesDecodeError) << "a still gauge needs the minute before";
  // A clean minute of a steady stream is a few dozen bytes.
  EXPECT_LT(second.size(), 40u);
}

}  // namespace
}  // namespace tusk
