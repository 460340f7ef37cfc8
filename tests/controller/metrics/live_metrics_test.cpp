// The live metrics of a run: what a fed record turns into (families, labels, values), which
// records count, how long series live, and the bounds on what agents can make the controller keep.
// Time is handed in, never read: nothing here depends on how fast it runs.
#include "controller/metrics/live_metrics.hpp"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/counter_names.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/verdict/ber_bound.hpp"

namespace tusk {
namespace {

namespace c = counters;
using namespace std::chrono_literals;
using prometheus::ClientMetric;
using prometheus::MetricFamily;

constexpr auto kSoakProfile = R"(name: soak-profile
agents: {hosts: [lab-a, lab-b]}
tests:
  - name: soak
    engine: dpdk
    duration: 10s
    topology: pairs
    rate: 1kpps
    frame_size: 1000B
    confidence: 99%
    thresholds: {max_ber: 1e-12}
  - name: second
    engine: dpdk
    duration: 10s
    topology: pairs
    rate: 1kpps
    frame_size: 1000B
)";

const LiveMetrics::Clock::time_point kT0{std::chrono::seconds(1'000)};

Profile profile() {
  return load_profile_text(kSoakProfile, "soak.yaml");
}

proto::StreamCounters rx_stream(const std::string& peer, std::uint64_t frames) {
  proto::StreamCounters stream;
  stream.set_stream_id("rx:" + peer);
  stream.set_peer(peer);
  stream.set_kind("rx");
  auto& map = *stream.mutable_counters();
  map[std::string(c::kRxFrames)] = frames;
  map[std::string(c::kRxBytes)] = frames * 1000;
  map[std::string(c::kBitsCompared)] = frames * 8000;
  map[std::string(c::kBitErrors)] = 0;
  map[std::string(c::kLostFrames)] = 2;
  map["vendor_counter_nobody_exports"] = 7;
  return stream;
}

proto::Record sample(int test, std::uint32_t index, std::vector<proto::StreamCounters> streams,
                     const std::string& run_id = "run-1") {
  proto::Record record;
  auto& body = *record.mutable_sample();
  body.set_run_id(run_id);
  body.set_test_index(test);
  body.set_index(index);
  body.set_elapsed_ms(index * 1000ULL);
  for (auto& stream : streams) *body.add_streams() = std::move(stream);
  return record;
}

proto::Record result(int test, std::vector<proto::StreamCounters> streams) {
  proto::Record record;
  auto& body = *record.mutable_result();
  body.set_run_id("run-1");
  body.set_test_index(test);
  body.set_completed(true);
  for (auto& stream : streams) *body.add_streams() = std::move(stream);
  return record;
}

const MetricFamily* find_family(const std::vector<MetricFamily>& families, const std::string& name) {
  for (const auto& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

std::optional<std::string> label(const ClientMetric& metric, const std::string& name) {
  for (const auto& entry : metric.label) {
    if (entry.name == name) return entry.value;
  }
  return std::nullopt;
}

// The one value of a family without labels, or of the one metric whose `agent` is `agent`.
std::optional<double> value(const std::vector<MetricFamily>& families, const std::string& name,
                            const std::string& agent = "") {
  const MetricFamily* family = find_family(families, name);
  if (!family) return std::nullopt;
  for (const auto& metric : family->metric) {
    if (!agent.empty() && label(metric, "agent") != agent) continue;
    return family->type == prometheus::MetricType::Counter ? metric.counter.value : metric.gauge.value;
  }
  return std::nullopt;
}

std::vector<AgentLink> two_links() {
  AgentLink a, b;
  a.name = "lab-a";
  a.connected = true;
  a.duplicate_records = 3;
  a.missing_records = 2;
  b.name = "lab-b";
  b.connected = false;
  b.duplicate_records = 1;
  return {a, b};
}

TEST(LiveMetrics, ASampleBecomesOneSeriesPerExportedCounterWithTheStreamsLabels) {
  LiveMetrics metrics(profile());
  auto attachment = metrics.attach("run-1", two_links);
  metrics.test_started(0);
  metrics.on_record("lab-b", sample(0, 1, {rx_stream("lab-a", 1000)}), kT0);

  const auto families = metrics.collect(kT0);
  const MetricFamily* rx_frames = find_family(families, "tusk_stream_rx_frames_total");
  ASSERT_NE(rx_frames, nullptr);
  EXPECT_EQ(rx_frames->type, prometheus::MetricType::Counter);
  ASSERT_EQ(rx_frames->metric.size(), 1u);
  const ClientMetric& series = rx_frames->metric[0];
  EXPECT_EQ(series.counter.value, 1000);
  const std::vector<ClientMetric::Label> expected{{"test", "soak"},          {"agent", "lab-b"}, {"peer", "lab-a"},
                                                  {"stream", "rx:lab-a"},    {"kind", "rx"},     {"flow", ""},
                                                  {"link", "lab-a -> lab-b"}};
  EXPECT_EQ(series.label, expected);
  EXPECT_EQ(value(families, "tusk_stream_lost_frames_total"), 2);
  EXPECT_EQ(value(families, "tusk_stream_bits_compared_total"), 8e6);
  EXPECT_EQ(find_family(families, "tusk_stream_tx_frames_total"), nullptr) << "the stream reports no tx_frames";
  // The first sample's interval starts with the test: 1 MB in 1 s.
  EXPECT_EQ(value(families, "tusk_stream_throughput_bits_per_second"), 8e6);
  // The bound the verdict will report, at the test's own confidence.
  EXPECT_DOUBLE_EQ(*value(families, "tusk_stream_ber_upper_bound"), estimate_ber(0, 8'000'000, 0.99).upper_bound);

  EXPECT_EQ(value(families, "tusk_agents_connected"), 1);
  EXPECT_EQ(value(families, "tusk_agents_known"), 2);
  EXPECT_EQ(value(families, "tusk_records_received_total"), 1);
  EXPECT_EQ(value(families, "tusk_records_duplicate_total"), 4);
  EXPECT_EQ(value(families, "tusk_records_missing_total"), 2);
  EXPECT_EQ(value(families, "tusk_current_test_index"), 0);
  EXPECT_EQ(value(families, "tusk_run_finished"), 0);
  const MetricFamily* info = find_family(families, "tusk_run_info");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(label(info->metric.at(0), "run_id"), "run-1");
  EXPECT_EQ(label(info->metric.at(0), "profile"), "soak-profile");
  const MetricFamily* test = find_family(families, "tusk_current_test_info");
  ASSERT_NE(test, nullptr);
  EXPECT_EQ(label(test->metric.at(0), "test"), "soak");
}

TEST(LiveMetrics, ThroughputIsOverTheLastIntervalAndCountersAreTheLatest) {
  LiveMetrics metrics(profile());
  auto attachment = metrics.attach("run-1", two_links);
  metrics.test_started(0);
  metrics.on_record("lab-b", sample(0, 1, {rx_stream("lab-a", 1000)}), kT0);
  metrics.on_record("lab-b", sample(0, 2, {rx_stream("lab-a", 3000)}), kT0 + 1s);
  auto families = metrics.collect(kT0 + 1s);
  EXPECT_EQ(value(families, "tusk_stream_rx_frames_total"), 3000);
  EXPECT_EQ(value(families, "tusk_stream_throughput_bits_per_second"), 16e6) << "2 MB in the second second";

  // An older sample, resent or reordered, changes nothing.
  metrics.on_record("lab-b", sample(0, 1, {rx_stream("lab-a", 1000)}), kT0 + 1s);
  families = metrics.collect(kT0 + 1s);
  EXPECT_EQ(value(families, "tusk_stream_rx_frames_total"), 3000);
}

TEST(LiveMetrics, AResultKeepsTheFinalCountersAndEndsTheThroughput) {
  LiveMetrics metrics(profile());
  auto attachment = metrics.attach("run-1", two_links);
  metrics.test_started(0);
  metrics.on_record("lab-b", sample(0, 1, {rx_stream("lab-a", 1000)}), kT0);
  metrics.on_record("lab-b", result(0, {rx_stream("lab-a", 1500)}), kT0);
  metrics.on_record("lab-b", sample(0, 2, {rx_stream("lab-a", 9999)}), kT0);
  const auto families = metrics.collect(kT0);
  EXPECT_EQ(value(families, "tusk_stream_rx_frames_total"), 1500);
  EXPECT_EQ(find_family(families, "tusk_stream_throughput_bits_per_second"), nullptr);
}

TEST(LiveMetrics, RecordsOfAnotherRunOrOfNoTestOfThisOneMakeNoSeries) {
  LiveMetrics metrics(profile());
  metrics.on_record("lab-b", sample(0, 1, {rx_stream("lab-a", 1000)}), kT0);  // before the run has an id
  auto attachment = metrics.attach("run-1", two_links);
  metrics.test_started(0);
  metrics.on_record("lab-b", sample(0, 1, {rx_stream("lab-a", 1000)}, "another-run"), kT0);
  metrics.on_record("lab-b", sample(1, 1, {rx_stream("lab-a", 1000)}), kT0);  // a test not started
  metrics.on_record("lab-b", sample(7, 1, {rx_stream("lab-a", 1000)}), kT0);
  metrics.on_record("lab-b", sample(-1, 1, {rx_stream("lab-a", 1000)}), kT0);
  metrics.on_record("lab-b", sample(0, 0, {rx_stream("lab-a", 1000)}), kT0);
  proto::StreamCounters nothing_exported;
  nothing_exported.set_stream_id("port:0");
  (*nothing_exported.mutable_counters())["rx_crc_errors"] = 1;
  metrics.on_record("lab-b", sample(0, 1, {nothing_exported}), kT0);

  const auto families = metrics.collect(kT0);
  for (const auto& family : families) EXPECT_EQ(family.name.rfind("tusk_stream_", 0), std::string::npos) << family.name;
  EXPECT_EQ(value(families, "tusk_records_received_total"), 7) << "every record arrived, whatever it held";
}

TEST(LiveMetrics, TheNextTestReplacesTheLastOnesSeriesAndALateRecordOfTheOldOneIsIgnored) {
  LiveMetrics metrics(profile());
  auto attachment = metrics.attach("run-1", two_links);
  metrics.test_started(0);
  metrics.on_record("lab-b", sample(0, 1, {rx_stream("lab-a", 1000)}), kT0);
  metrics.test_started(1);
  metrics.on_record("lab-a", sample(1, 1, {rx_stream("lab-b", 500)}), kT0);
  metrics.on_record("lab-b", result(0, {rx_stream("lab-a", 1500)}), kT0);

  const auto families = metrics.collect(kT0);
  const MetricFamily* rx_frames = find_family(families, "tusk_stream_rx_frames_total");
  ASSERT_NE(rx_frames, nullptr);
  ASSERT_EQ(rx_frames->metric.size(), 1u);
  EXPECT_EQ(label(rx_frames->metric[0], "test"), "second");
  EXPECT_EQ(label(rx_frames->metric[0], "agent"), "lab-a");
  // The second test sets no confidence of its own: the engine's default holds, as in the verdict.
  EXPECT_NE(find_family(families, "tusk_stream_ber_upper_bound"), nullptr);
}

// The running test's suspects as its latest checkpoint localised them: each a series valued the
// seconds into the test its first window at fault began; the next checkpoint's replace them, and
// the next test starts with none. At most kMaxLiveSuspects, whatever a localisation names.
TEST(LiveMetrics, SuspectsAreTheLatestCheckpointsWithWhenTheirFirstWindowBegan) {
  LiveMetrics metrics(profile());
  auto attachment = metrics.attach("run-1", two_links);
  metrics.test_started(0);
  EXPECT_EQ(find_family(metrics.collect(kT0), "tusk_suspect_link"), nullptr) << "none named yet";
  metrics.set_suspects(
      0, {{"l1:s2 -> s2:l1", "loss", "high", 4.0, 6.0}, {"host lab-b", "NIC, optic or cable", "", {}, {}}});
  auto families = metrics.collect(kT0);
  const MetricFamily* suspects = find_family(families, "tusk_suspect_link");
  ASSERT_NE(suspects, nullptr);
  ASSERT_EQ(suspects->metric.size(), 2u);
  EXPECT_EQ(label(suspects->metric[0], "test"), "soak");
  EXPECT_EQ(label(suspects->metric[0], "link"), "l1:s2 -> s2:l1");
  EXPECT_EQ(label(suspects->metric[0], "kind"), "loss");
  EXPECT_EQ(label(suspects->metric[0], "confidence"), "high");
  EXPECT_EQ(suspects->metric[0].gauge.value, 4.0);
  EXPECT_EQ(suspects->metric[1].gauge.value, -1.0) << "no windows: when is not known";
  // When it was first named: 2 s from the start of its first window at fault to its name.
  const MetricFamily* named = find_family(families, "tusk_suspect_named_seconds");
  ASSERT_NE(named, nullptr);
  ASSERT_EQ(named->metric.size(), 1u) << "one suspect says when it was named";
  EXPECT_EQ(label(named->metric[0], "link"), "l1:s2 -> s2:l1");
  EXPECT_EQ(named->metric[0].gauge.value, 6.0);

  metrics.set_suspects(0, {{"l2:s1 -> s1:l2", "damage", "medium", 9.0, 10.0}});
  families = metrics.collect(kT0);
  ASSERT_EQ(find_family(families, "tusk_suspect_link")->metric.size(), 1u);
  EXPECT_EQ(label(find_family(families, "tusk_suspect_link")->metric[0], "link"), "l2:s1 -> s1:l2");

  metrics.test_started(1);
  EXPECT_EQ(find_family(metrics.collect(kT0), "tusk_suspect_link"), nullptr) << "the next test starts with none";
  metrics.set_suspects(1, std::vector<LiveSuspect>(kMaxLiveSuspects + 10, {"l", "loss", "low", 1.0, 2.0}));
  EXPECT_EQ(find_family(metrics.collect(kT0), "tusk_suspect_link")->metric.size(), kMaxLiveSuspects);
}

TEST(LiveMetrics, StreamsPastTheLimitAreCountedNotKeptAndLongLabelsAreCutOnACharacter) {
  LiveMetricsLimits limits;
  limits.max_streams = 2;
  limits.max_label_bytes = 6;
  LiveMetrics metrics(profile(), limits);
  auto attachment = metrics.attach("run-1", two_links);
  metrics.test_started(0);
  // "€" is 3 bytes: the first six bytes of "ab€€" would split the second one.
  metrics.on_record("ab€€", sample(0, 1, {rx_stream("x", 1), rx_stream("y", 1), rx_stream("z", 1)}), kT0);
  metrics.on_record("ab€€", sample(0, 2, {rx_stream("x", 2), rx_stream("y", 2), rx_stream("z", 2)}), kT0);

  const auto families = metrics.collect(kT0);
  const MetricFamily* rx_frames = find_family(families, "tusk_stream_rx_frames_total");
  ASSERT_NE(rx_frames, nullptr);
  EXPECT_EQ(rx_frames->metric.size(), 2u);
  EXPECT_EQ(label(rx_frames->metric.at(0), "agent"), "ab€");
  EXPECT_EQ(value(families, "tusk_metrics_streams_omitted"), 1) << "z, once however often it came";
}

// Before: at the stream limit alone one scrape was 222 MB (300,000 series).
TEST(LiveMetrics, StreamsPastTheSeriesByteBudgetAreCountedNotKept) {
  LiveMetricsLimits limits;
  limits.max_series_bytes = 10'000;
  LiveMetrics metrics(profile(), limits);
  auto attachment = metrics.attach("run-1", two_links);
  metrics.test_started(0);
  std::vector<proto::StreamCounters> streams;
  for (int i = 0; i < 100; ++i) streams.push_back(rx_stream("stream-" + std::to_string(i), 1));
  metrics.on_record("lab-a", sample(0, 1, streams), kT0);
  const auto families = metrics.collect(kT0);
  const MetricFamily* rx_frames = find_family(families, "tusk_stream_rx_frames_total");
  ASSERT_NE(rx_frames, nullptr);
  EXPECT_GT(rx_frames->metric.size(), 0u);
  EXPECT_LT(rx_frames->metric.size(), 10u);
  EXPECT_EQ(value(families, "tusk_metrics_streams_omitted"), 100.0 - static_cast<double>(rx_frames->metric.size()));
  // A new test starts with the whole budget again.
  metrics.test_started(1);
  metrics.on_record("lab-a", sample(1, 1, streams), kT0);
  EXPECT_EQ(find_family(metrics.collect(kT0), "tusk_stream_rx_frames_total")->metric.size(), rx_frames->metric.size());
}

// Before: a method's steps (tests added while the run goes) were not exported, and the series of
// the test before stayed on for the whole method.
TEST(LiveMetrics, AMethodsStepsAreExportedEachUnderItsOwnName) {
  const Profile loaded = profile();
  LiveMetrics metrics(loaded);
  auto attachment = metrics.attach("run-1", two_links);
  metrics.test_started(0);
  metrics.on_record("lab-a", sample(0, 1, {rx_stream("lab-b", 5)}), kT0);
  TestSpec step = loaded.tests[0];
  step.name = "soak step 1 (1000 B)";
  metrics.add_test(step);
  metrics.test_started(2);
  EXPECT_EQ(find_family(metrics.collect(kT0), "tusk_stream_rx_frames_total"), nullptr)
      << "the test before the method's step still shows";
  metrics.on_record("lab-a", sample(2, 1, {rx_stream("lab-b", 7)}), kT0);
  const auto families = metrics.collect(kT0);
  const MetricFamily* rx_frames = find_family(families, "tusk_stream_rx_frames_total");
  ASSERT_NE(rx_frames, nullptr) << "the step's streams are not exported";
  ASSERT_EQ(rx_frames->metric.size(), 1u);
  EXPECT_EQ(label(rx_frames->metric.at(0), "test"), "soak step 1 (1000 B)");
  EXPECT_EQ(value(families, "tusk_stream_rx_frames_total"), 7);
  EXPECT_EQ(value(families, "tusk_run_tests"), 2) << "the profile's tests, not its steps";
}

TEST(LiveMetrics, RecordsPerSecondCountsTheLastFiveWholeSeconds) {
  LiveMetrics metrics(profile());
  for (int second = 0; second < 5; ++second) {
    for (int i = 0; i < 10; ++i)
      metrics.on_record("lab-a", proto::Record{}, kT0 + std::chrono::seconds(second) + 100ms);
  }
  // The sixth second has only begun: the five before it count, the current one does not.
  metrics.on_record("lab-a", proto::Record{}, kT0 + 5s);
  EXPECT_EQ(value(metrics.collect(kT0 + 5s + 900ms), "tusk_records_per_second"), 10);
  EXPECT_EQ(value(metrics.collect(kT0 + 30s), "tusk_records_per_second"), 0) << "nothing for long enough";
}

TEST(LiveMetrics, AfterTheRunTheFinalValuesStayAndNoAgentIsConnected) {
  LiveMetrics metrics(profile());
  {
    auto attachment = metrics.attach("run-1", two_links);
    metrics.test_started(0);
    metrics.on_record("lab-b", sample(0, 1, {rx_stream("lab-a", 1000)}), kT0);
  }
  const auto families = metrics.collect(kT0);
  EXPECT_EQ(value(families, "tusk_run_finished"), 1);
  EXPECT_EQ(value(families, "tusk_current_test_index"), -1);
  EXPECT_EQ(find_family(families, "tusk_current_test_info"), nullptr);
  EXPECT_EQ(value(families, "tusk_agents_connected"), 0);
  EXPECT_EQ(value(families, "tusk_records_duplicate_total"), 4);
  EXPECT_EQ(value(families, "tusk_stream_rx_frames_total"), 1000);
}

TEST(LiveMetrics, TheTextFormatEscapesWhatAgentsNamed) {
  LiveMetrics metrics(profile());
  auto attachment = metrics.attach("run-1", two_links);
  metrics.test_started(0);
  proto::StreamCounters stream = rx_stream("lab-a", 1000);
  stream.set_stream_id("a\"b\\c\nd");
  metrics.on_record("lab-b", sample(0, 1, {stream}), kT0);
  std::ostringstream text;
  prometheus::TextSerializer().Serialize(text, metrics.collect(kT0));
  EXPECT_NE(text.str().find(R"(stream="a\"b\\c\nd")"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("# TYPE tusk_stream_rx_frames_total counter"), std::string::npos) << text.str();
}

// The progress line names the first suspect with when its fault began and when a checkpoint first
// named it, and counts the rest; a suspect without windows has no "since".
TEST(LiveMetrics, TheProgressLineNamesTheFirstSuspectItsOnsetAndWhenItWasNamed) {
  EXPECT_EQ(progress_suspects_text({}), "");
  EXPECT_EQ(progress_suspects_text({{"l1:s2 -> s2:l1", "loss", "high", 20.0, 23.4}}),
            "  suspect l1:s2 -> s2:l1 since 20 s, named at 23 s");
  EXPECT_EQ(progress_suspects_text({{"host b", "cable", "", std::nullopt, 61.0},
                                    {"l", "loss", "low", 1.0, 2.0},
                                    {"m", "damage", "low", 1.0, 2.0}}),
            "  suspect host b, named at 61 s (+2 more)");
}

}  // namespace
}  // namespace tusk
