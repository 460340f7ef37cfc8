// The compact telemetry wire: a stream's names and ids travel in its layout samples, the samples
// between carry values only, and the controller reads the same counters either way.
#include "agent/sample_compactor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/wire_bounds.hpp"
#include "controller/run/run_data.hpp"

namespace tusk {
namespace {

proto::StreamCounters engine_sample(std::uint64_t n, bool with_gap_counter = false) {
  proto::StreamCounters stream;
  stream.set_stream_id("rx:lab-a/1");
  stream.set_peer("lab-a");
  stream.set_kind("rx");
  (*stream.mutable_counters())["rx_frames"] = 100 * n;
  (*stream.mutable_counters())["rx_bytes"] = 150'000 * n;
  (*stream.mutable_counters())["lost_frames"] = n / 10;
  (*stream.mutable_counters())["bit_errors"] = 0;
  (*stream.mutable_counters())["bits_compared"] = 1'200'000 * n;
  if (with_gap_counter) (*stream.mutable_counters())["traffic_gaps"] = 1;
  (*stream.mutable_gauges())["latency_p99_ns"] = 2500.0;
  return stream;
}

TEST(SampleCompactor, NamesTravelInLayoutSamplesAndValuesAloneBetween) {
  SampleCompactor compactor;
  auto first = engine_sample(1);
  compactor.compact(first);
  EXPECT_EQ(first.counter_names_size(), 5);
  EXPECT_EQ(first.counter_values_size(), 5);
  EXPECT_EQ(first.gauge_names_size(), 1);
  EXPECT_TRUE(first.counters().empty());
  EXPECT_EQ(first.peer(), "lab-a");
  const std::size_t named_bytes = engine_sample(2).ByteSizeLong();
  auto second = engine_sample(2);
  compactor.compact(second);
  EXPECT_EQ(second.counter_names_size(), 0);
  EXPECT_EQ(second.counter_values_size(), 5);
  EXPECT_EQ(second.peer(), "") << "the ids are in the layout sample";
  EXPECT_EQ(second.stream_id(), "rx:lab-a/1");
  EXPECT_LT(second.ByteSizeLong() * 3, named_bytes)
      << second.ByteSizeLong() << " bytes compact, " << named_bytes << " with names";
  // Every kLayoutEverySamples-th sample names them again; so does a change of names.
  int laid_out = 0;
  for (std::uint64_t n = 3; n < 3 + wire::kLayoutEverySamples; ++n) {
    auto stream = engine_sample(n);
    compactor.compact(stream);
    laid_out += stream.counter_names_size() > 0;
  }
  EXPECT_EQ(laid_out, 1);
  auto changed = engine_sample(500, true);
  compactor.compact(changed);
  EXPECT_EQ(changed.counter_names_size(), 6);
}

// Before: each periodic layout sample named the counters in its map's order, which differs between
// maps: the controller made a new layout of the same names every 10 s (controller_scale's 3-minute
// soak: 71,871 layouts for 4,032 streams), and its series file a new row and minute each time.
TEST(SampleCompactor, APeriodicLayoutSampleNamesTheSameCountersInTheSameOrder) {
  SampleCompactor compactor;
  std::vector<std::string> first_names;
  int laid_out = 0;
  for (std::uint64_t n = 1; n <= 3 * wire::kLayoutEverySamples; ++n) {
    proto::StreamCounters stream;
    stream.set_stream_id("rx:lab-a/1");
    // Built in another order every sample, and with many names, so the maps' orders differ.
    for (int c = 0; c < 40; ++c) {
      const int name = n % 2 ? c : 39 - c;
      (*stream.mutable_counters())["counter_" + std::to_string(name * 7919 % 1000)] = n;
    }
    compactor.compact(stream);
    if (stream.counter_names_size() == 0) continue;
    ++laid_out;
    const std::vector<std::string> names(stream.counter_names().begin(), stream.counter_names().end());
    if (first_names.empty()) {
      first_names = names;
      EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
    }
    EXPECT_EQ(names, first_names) << "layout sample " << laid_out;
  }
  EXPECT_EQ(laid_out, 3);
}

proto::Record sample_record(std::uint32_t index, proto::StreamCounters stream) {
  proto::Record record;
  record.mutable_sample()->set_run_id("run");
  record.mutable_sample()->set_test_index(0);
  record.mutable_sample()->set_index(index);
  record.mutable_sample()->set_elapsed_ms(index * 100);
  *record.mutable_sample()->add_streams() = std::move(stream);
  return record;
}

TEST(SampleCompactor, TheControllerReadsTheSameCountersFromCompactSamples) {
  RunData data("run", {1000});
  data.expect("lab-b", 0, 1);
  SampleCompactor compactor;
  for (std::uint32_t i = 1; i <= 250; ++i) {
    auto stream = engine_sample(i, i >= 120);
    compactor.compact(stream);
    const proto::Record record = sample_record(i, std::move(stream));
    // A reader of maps (the live metrics) gets them back.
    const auto kept = data.on_record("lab-b", proto::Record(record), true);
    ASSERT_TRUE(kept.has_value()) << i;
    const proto::Record& named = *kept;
    ASSERT_EQ(named.sample().streams(0).counters().at("rx_frames"), 100u * i) << i;
    EXPECT_EQ(named.sample().streams(0).peer(), "lab-a");
  }
  data.with([](RunState& s) {
    const auto& series = s.tests[std::pair<int, std::string>{0, "lab-b"}].series.at("rx:lab-a/1");
    EXPECT_EQ(series.latest_counter("rx_frames"), 25'000u);
    EXPECT_EQ(series.latest_counter("traffic_gaps"), 1u);
    EXPECT_EQ(series.info().peer(), "lab-a");
    std::uint64_t lost = 0;
    for (const auto& bin : series.bins()) lost += bin.lost;
    EXPECT_EQ(lost, 25u);
    EXPECT_TRUE(s.faults.empty());
  });
}

TEST(SampleCompactor, ValuesBeforeTheirNamesOrNotMatchingThemAreDroppedAndSaid) {
  RunData data("run", {1000});
  data.expect("lab-b", 0, 2);
  proto::StreamCounters unnamed;
  unnamed.set_stream_id("rx:lab-a/1");
  unnamed.add_counter_values(7);
  data.on_record("lab-b", sample_record(1, unnamed));
  SampleCompactor compactor;
  auto named = engine_sample(2);
  compactor.compact(named);
  data.on_record("lab-b", sample_record(2, named));
  proto::StreamCounters short_one;
  short_one.set_stream_id("rx:lab-a/1");
  short_one.add_counter_values(7);
  data.on_record("lab-b", sample_record(3, short_one));
  data.with([](RunState& s) {
    const auto& series = s.tests[std::pair<int, std::string>{0, "lab-b"}].series.at("rx:lab-a/1");
    EXPECT_EQ(series.latest_index(), 2u);
    ASSERT_EQ(s.faults.size(), 2u);
    EXPECT_NE(s.faults[0].message.find("before naming them"), std::string::npos) << s.faults[0].message;
    EXPECT_NE(s.faults[1].message.find("sent 1 counter and 0 gauge values"), std::string::npos) << s.faults[1].message;
  });
}

}  // namespace
}  // namespace tusk
