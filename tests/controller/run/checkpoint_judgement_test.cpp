// A checkpoint judges a running test on a copy of its data that holds no stream's bins, and
// writes each stream's bins from the live data as report.json is written: the same verdict as a
// copy of everything gave, without doubling the controller's memory at every checkpoint.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "controller/report/report_json_parts.hpp"
#include "controller/run/run_data.hpp"
#include "controller/run/test_judgement.hpp"
#include "tests/support/profile_text.hpp"

namespace tusk {
namespace {

constexpr std::int64_t kStartNs = 1'795'000'000'000'000'000;  // 2026-11-18T11:06:40Z
const std::string kStream = "rx:a/1";

// Samples `from`..`to` of b's stream from a, 12.5 kB each 100 ms, but none from 40 to 42 s and 5
// frames lost at 41 s: the fifth window of 10 s fails.
void send_samples(RunData& data, std::uint32_t from, std::uint32_t to) {
  for (std::uint32_t i = from; i <= to; ++i) {
    const std::uint64_t bytes = 12'500ull * std::min<std::uint32_t>(i, 400) + 12'500ull * (i > 420 ? i - 420 : 0);
    proto::Record record;
    auto& sample = *record.mutable_sample();
    sample.set_run_id("run");
    sample.set_index(i);
    sample.set_elapsed_ms(i * 100);
    sample.set_agent_time_ns(kStartNs + std::int64_t{i} * 100'000'000);
    auto& stream = *sample.add_streams();
    stream.set_stream_id(kStream);
    stream.set_kind("rx");
    stream.set_peer("a");
    (*stream.mutable_counters())["rx_bytes"] = bytes;
    (*stream.mutable_counters())["rx_frames"] = bytes / 1250;
    (*stream.mutable_counters())["lost_frames"] = i >= 410 ? 5 : 0;
    data.on_record("b", record);
  }
}

TEST(CheckpointJudgement, ARunningTestIsJudgedWithoutACopyOfItsBinsAndWritesThemFromTheLiveStream) {
  const Profile profile = testing::load_profile_yaml(R"(
name: windowed
agents: {count: 2}
tests:
  - name: soak
    engine: dpdk
    duration: 60s
    sample_interval: 100ms
    thresholds: {window: 10s, max_lost_frames: 0}
)");
  const TestSpec& spec = profile.tests.at(0);
  RunData data("run", {most_samples(spec.duration, spec.sample_interval)});
  data.expect("b", 0, 1);
  data.judge_windows(0, spec);
  send_samples(data, 1, 450);

  RunData::TestSoFar so_far = data.test_so_far(0, {"b", "c"});
  const std::uint32_t live_width = data.with([](RunState& s) {
    return s.tests.at({0, "b"}).series.at(kStream).width();
  });
  EXPECT_GT(live_width, 1u) << "450 samples fill 64 bins of one";
  EXPECT_EQ(so_far.widest_bins, live_width);
  const StreamSeries& copied = so_far.per_agent.at("b").series.at(kStream);
  EXPECT_TRUE(copied.bins().empty()) << "a copy of every stream's bins was the checkpoint's peak";
  EXPECT_TRUE(copied.windows.active());
  ASSERT_TRUE(so_far.per_agent.at("b").result);
  EXPECT_FALSE(so_far.per_agent.at("b").result->completed());
  EXPECT_EQ(so_far.per_agent.at("b").result->samples(), 450u);
  ASSERT_EQ(so_far.per_agent.at("b").result->streams_size(), 1);
  EXPECT_EQ(so_far.per_agent.at("b").result->streams(0).counters().at("lost_frames"), 5u);
  EXPECT_TRUE(so_far.per_agent.at("c").series.empty()) << "an agent that sent nothing";
  EXPECT_FALSE(so_far.per_agent.at("c").result);

  TestOutcome test;
  test.spec = spec;
  test.agents = {"b"};
  test.per_agent = std::move(so_far.per_agent);
  test.lent_series = TestOutcome::LentSeries{
      so_far.widest_bins,
      [&data](const std::string& agent, const std::string& id) { return data.stream_now(0, agent, id); }};
  judge_test(test, nullptr);
  ASSERT_EQ(test.streams.size(), 1u);
  const StreamVerdict& verdict = test.streams[0];
  ASSERT_TRUE(verdict.windows);
  EXPECT_EQ(verdict.windows->judged, 5u) << "the window being filled is judged as it stands";
  EXPECT_EQ(verdict.windows->failed, 1u);
  EXPECT_FALSE(verdict.passed());
  EXPECT_EQ(verdict.stream.counters().at("lost_frames"), 5u);
  EXPECT_EQ(test.per_agent.at("b").result->streams_size(), 0) << "the counters live on in the verdict alone";
  data.with([](RunState& s) {
    const StreamSeries& live = s.tests.at({0, "b"}).series.at(kStream);
    EXPECT_EQ(live.windows.judged, 4u) << "the checkpoint closed its copy's window, not the live one";
    EXPECT_FALSE(live.bins().empty());
  });

  // Written a moment later: the stream's bins as they are then.
  send_samples(data, 451, 460);
  EXPECT_EQ(test_bin_width(test), live_width);
  const auto written = test_stream_json(test, verdict, test_bin_width(test));
  std::uint64_t samples = 0;
  for (const auto& count : written.at("bins").at("samples")) samples += count.get<std::uint64_t>();
  EXPECT_EQ(samples, 460u);
  EXPECT_EQ(written.at("bins").at("index").back(), 460);
  EXPECT_EQ(written.at("bins").at("lost").size(), written.at("bins").at("index").size());
}

}  // namespace
}  // namespace tusk
