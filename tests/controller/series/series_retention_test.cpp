// A series file made for a night (issue 59 point 3): full resolution for the last `full` of the
// run's clock and around every event and failed window, every stream's minutes for the whole run,
// a budget that drops the oldest full rows first, and files of the first schema still read.
#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "common/clock.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/run/run_data.hpp"
#include "controller/series/series_file.hpp"
#include "controller/series/series_outcome.hpp"
#include "controller/series/series_reader.hpp"
#include "tests/support/profile_text.hpp"
#include "tests/support/series_scratch.hpp"
#include "tests/support/yaml_errors.hpp"

namespace tusk {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr std::uint32_t kNight = 7'200;  // two hours of 1 s samples
constexpr std::uint64_t kBytesPerSecond = 125'000;

// Streams a (loses 5 frames at 30 min), b (carries half its rate in minute 60: a window fails on
// throughput with no event counter moving), c (clean), folded by the run as they come (RunData),
// with a pace that admits two hours of samples at once.
void run_a_night(SeriesFile& file) {
  const Profile profile = testing::load_profile_yaml(R"(
name: night
agents: {count: 2}
tests:
  - name: soak
    engine: dpdk
    duration: 2h
    sample_interval: 1s
    thresholds: {window: 60s, min_throughput: 900kbps, max_lost_frames: 0}
)");
  const TestSpec& spec = profile.tests.at(0);
  RunData data("run", {most_samples(spec.duration, spec.sample_interval)});
  data.expect("x", 0, 3);
  data.judge_windows(0, spec);
  data.pace(0, realtime_ns() - std::int64_t{3} * 3600 * 1'000'000'000, 1s);
  data.write_series_to(&file);
  std::map<std::string, std::uint64_t> bytes, lost;
  for (std::uint32_t i = 1; i <= kNight; ++i) {
    proto::Record record;
    auto& sample = *record.mutable_sample();
    sample.set_run_id("run");
    sample.set_index(i);
    sample.set_elapsed_ms(std::uint64_t{i} * 1000);
    for (const std::string name : {"a", "b", "c"}) {
      bytes[name] += name == "b" && i > 3600 && i <= 3660 ? kBytesPerSecond / 2 : kBytesPerSecond;
      lost[name] += name == "a" && i == 1800 ? 5 : 0;
      auto& stream = *sample.add_streams();
      stream.set_stream_id("rx:" + name);
      stream.set_kind("rx");
      stream.set_peer("y");
      (*stream.mutable_counters())["rx_bytes"] = bytes[name];
      (*stream.mutable_counters())["rx_frames"] = bytes[name] / 1250;
      (*stream.mutable_counters())["lost_frames"] = lost[name];
      (*stream.mutable_gauges())["latency_p99_ns"] = 20'000 + (i % 7);
      (*stream.mutable_gauges())["path_mtu"] = 1500;
    }
    data.on_record("x", record);
    if (i % 10 == 0) file.flush();  // a commit every 10 s of samples, as a run's would hold
  }
  file.flush();
}

std::set<std::uint64_t> full_seconds(const std::string& dir, const std::string& stream) {
  std::set<std::uint64_t> seconds;
  for (const auto& row : testing::printed_series_rows(dir, {0, "x", stream}, SeriesResolution::Full)) {
    seconds.insert(row["elapsed_ms"].get<std::uint64_t>() / 1000);
  }
  return seconds;
}

TEST(SeriesRetention, ANightKeepsItsLastMinutesItsEventsAndFailedWindowsInFullAndEveryMinuteOfEveryStream) {
  testing::ScratchDir dir("retention-test");
  SeriesRetention retention;
  retention.full = 15min;
  retention.margin = 30s;
  SeriesFileStats stats;
  {
    SeriesFile file((dir.path / kSeriesFileName).string(), "run", {}, retention);
    run_a_night(file);
    stats = file.stats();
    EXPECT_FALSE(file.problem()) << *file.problem();
  }
  EXPECT_EQ(stats.samples_written, 3 * kNight);
  EXPECT_GT(stats.samples_pruned, 3 * (kNight - 1'200)) << "rows past 15 minutes went";
  const std::string run = dir.path.string();
  const auto a = full_seconds(run, "rx:a"), b = full_seconds(run, "rx:b"), c = full_seconds(run, "rx:c");
  // The last 15 minutes of every stream, every sample.
  for (std::uint64_t s = kNight - 900; s <= kNight; ++s) {
    ASSERT_TRUE(a.contains(s) && b.contains(s) && c.contains(s)) << "second " << s;
  }
  // a's loss at 30 min, with the margin on either side: an event counter grew.
  for (std::uint64_t s = 1800 - 30; s <= 1800 + 30; ++s) ASSERT_TRUE(a.contains(s)) << "a, second " << s;
  // b's failed window (minute 60, judged as minute 61 began), with the margin: no counter of an
  // event moved, the run's window judgement kept it.
  for (std::uint64_t s = 3600 - 30; s <= 3660 + 30; ++s) ASSERT_TRUE(b.contains(s)) << "b, second " << s;
  // Nothing else of the night: c keeps its last 15 minutes and at most a prune's cadence and a
  // commit more; a and b only their spans more (rows of 10 s are kept whole): a's loss also failed
  // its window, kept as b's is.
  EXPECT_LE(c.size(), 900u + 30 + 10 + 1);
  EXPECT_FALSE(c.contains(1800));
  EXPECT_FALSE(c.contains(3630));
  EXPECT_LE(a.size(), c.size() + 121 + 20);
  EXPECT_LE(b.size(), c.size() + 121 + 20);

  // Every minute of every stream, from the first to the last.
  const auto minutes = testing::printed_series_rows(run, {0, "x", "rx:c"}, SeriesResolution::Minutes);
  ASSERT_EQ(minutes.size(), kNight / 60 + 1);  // minute 0 (seconds 1-59) to minute 120 (second 7200)
  std::uint64_t bytes = 0;
  for (std::size_t m = 0; m < minutes.size(); ++m) {
    EXPECT_EQ(minutes[m]["resolution"], "minute");
    EXPECT_EQ(minutes[m]["minute"], m);
    bytes += minutes[m]["counters"]["rx_bytes"].get<std::uint64_t>();
    if (m > 0 && m < 120) {
      EXPECT_EQ(minutes[m]["samples"], 60) << m;
      EXPECT_EQ(minutes[m]["counters"]["rx_bytes"], 60 * kBytesPerSecond) << m;
      EXPECT_EQ(minutes[m]["counters_max"]["rx_bytes"], kBytesPerSecond) << m;
      EXPECT_EQ(minutes[m]["gauges_min"]["latency_p99_ns"], 20'000) << m;
      EXPECT_EQ(minutes[m]["gauges_max"]["latency_p99_ns"], 20'006) << m;
      EXPECT_EQ(minutes[m]["gauges"]["path_mtu"], 1500) << m;
    }
  }
  EXPECT_EQ(bytes, kNight * kBytesPerSecond);
  const auto b_minutes = testing::printed_series_rows(run, {0, "x", "rx:b"}, SeriesResolution::Minutes);
  EXPECT_EQ(b_minutes.at(60)["counters"]["rx_bytes"], 59 * kBytesPerSecond / 2 + kBytesPerSecond);
  EXPECT_EQ(b_minutes.at(60)["counters_min"]["rx_bytes"], kBytesPerSecond / 2);
  EXPECT_EQ(
      testing::printed_series_rows(run, {0, "x", "rx:a"}, SeriesResolution::Minutes).at(30)["counters"]["lost_frames"],
      5);

  // The night, whole: the minutes that kept no full row, then every full row; the changes add up
  // to where each stream ended, and a whole night of one stream is a few hundred lines.
  for (const std::string stream : {"rx:a", "rx:b", "rx:c"}) {
    const auto night = testing::printed_series_rows(run, {0, "x", stream}, SeriesResolution::Night);
    std::uint64_t sum = 0, last_ms = 0;
    for (const auto& row : night) {
      sum += row["counters"]["rx_bytes"].get<std::uint64_t>();
      EXPECT_GE(row["elapsed_ms"].get<std::uint64_t>(), last_ms) << stream << " in time order";
      last_ms = row["elapsed_ms"].get<std::uint64_t>();
    }
    EXPECT_EQ(sum, stream == "rx:b" ? kNight * kBytesPerSecond - 60 * kBytesPerSecond / 2 : kNight * kBytesPerSecond)
        << stream;
    EXPECT_LT(night.size(), 1'300u) << stream;
  }
  // A run drawn from the file alone ends each stream where it ended.
  const RunOutcome drawn = outcome_from_series((dir.path / kSeriesFileName).string());
  ASSERT_EQ(drawn.tests.size(), 1u);
  ASSERT_EQ(drawn.tests[0].streams.size(), 3u);
  EXPECT_EQ(drawn.tests[0].streams[0].stream.counters().at("lost_frames"), 5u);
}

// A test's last window is judged as the test ends (no later window begins it): failed, its rows
// outlive the retention too, while the next test's samples age the run's clock past them.
TEST(SeriesRetention, ATestsLastWindowFailedAsItEndedKeepsItsRows) {
  testing::ScratchDir dir("retention-test");
  SeriesRetention retention;
  retention.full = 5min;
  retention.margin = 0s;
  const Profile profile = testing::load_profile_yaml(R"(
name: two
agents: {count: 2}
tests:
  - {name: short, engine: dpdk, duration: 3m, sample_interval: 1s, thresholds: {window: 60s, min_throughput: 900kbps}}
  - {name: long, engine: dpdk, duration: 20m, sample_interval: 1s}
)");
  {
    SeriesFile file((dir.path / kSeriesFileName).string(), "run", {}, retention);
    RunData data("run", {180, 1200});
    data.expect("x", 0, 1);
    data.expect("x", 1, 1);
    data.judge_windows(0, profile.tests[0]);
    const std::int64_t origin = realtime_ns() - std::int64_t{3600} * 1'000'000'000;
    data.pace(0, origin, 1s);
    data.pace(1, origin + std::int64_t{180} * 1'000'000'000, 1s);
    data.write_series_to(&file);
    auto send = [&](int test, std::uint32_t i, std::uint64_t bytes) {
      proto::Record record;
      auto& sample = *record.mutable_sample();
      sample.set_run_id("run");
      sample.set_test_index(test);
      sample.set_index(i);
      sample.set_elapsed_ms(std::uint64_t{i} * 1000);
      auto& stream = *sample.add_streams();
      stream.set_stream_id("rx:y");
      stream.set_kind("rx");
      (*stream.mutable_counters())["rx_bytes"] = bytes;
      data.on_record("x", record);
      if (i % 10 == 0) file.flush();  // commits of 10 s of samples, as a run's would hold
    };
    std::uint64_t bytes = 0;
    for (std::uint32_t i = 1; i <= 180; ++i) send(0, i, bytes += i > 120 ? 50'000 : kBytesPerSecond);
    data.take_test(0, {"x"});
    for (std::uint32_t i = 1; i <= 1200; ++i) send(1, i, std::uint64_t{i} * kBytesPerSecond);
    file.flush();
  }
  const auto first_test = full_seconds(dir.path.string(), "rx:y");
  for (std::uint64_t s = 121; s <= 180; ++s) EXPECT_TRUE(first_test.contains(s)) << "second " << s;
  EXPECT_FALSE(first_test.contains(30)) << "the passing windows' rows went";
}

// Past the budget the oldest full rows go first, whatever they held; the minutes all stay, the
// newest samples too, and the report is told.
TEST(SeriesRetention, PastItsBudgetTheOldestFullRowsGoAndEveryMinuteStays) {
  testing::ScratchDir dir("retention-test");
  SeriesRetention retention;
  retention.full = 24h;  // time drops nothing: the budget does
  retention.budget = 1 << 20;
  SeriesFileStats stats;
  std::string problem;
  {
    SeriesFile file((dir.path / kSeriesFileName).string(), "run", {}, retention);
    std::vector<std::string> names;
    for (int c = 0; c < 24; ++c) names.push_back(fmt::format("counter_{}", c));
    const auto layout = std::make_shared<const StreamLayout>(names, std::vector<std::string>{});
    std::vector<std::int64_t> rows;
    for (int s = 0; s < 20; ++s) {
      proto::StreamCounters info;
      info.set_stream_id(fmt::format("rx:{}", s));
      rows.push_back(file.stream_row(0, "x", info));
    }
    std::vector<std::uint64_t> values(names.size());
    for (std::uint32_t i = 1; i <= 3'000; ++i) {
      proto::Sample sample;
      sample.set_index(i);
      sample.set_elapsed_ms(std::uint64_t{i} * 1000);
      for (std::size_t v = 0; v < values.size(); ++v) values[v] += 1'000'003 * (v + 1) + i % 97;  // 3-4 bytes a change
      for (const auto row : rows) file.append(row, sample, layout, values, {}, sample.elapsed_ms());
      if (i % 10 == 0) file.flush();
    }
    file.flush();
    stats = file.stats();
    problem = file.problem().value_or("");
  }
  EXPECT_GT(stats.samples_over_budget, 0u);
  EXPECT_LE(stats.used_bytes, retention.budget);
  EXPECT_FALSE(stats.full_rows_stopped);
  EXPECT_NE(problem.find("full-resolution rows dropped to keep the file within its budget of 1 MiB"), std::string::npos)
      << problem;
  const auto full = testing::printed_series_rows(dir.path.string(), {0, "x", "rx:7"}, SeriesResolution::Full);
  ASSERT_FALSE(full.empty());
  EXPECT_EQ(full.back()["sample"], 3'000) << "the newest stay";
  EXPECT_GT(full.front()["sample"], 1) << "the oldest went";
  EXPECT_EQ(testing::printed_series_rows(dir.path.string(), {0, "x", "rx:7"}, SeriesResolution::Minutes).size(),
            3'000u / 60 + 1);
}

// A run directory of an earlier release: text rows (schema 1), read as they were.
TEST(SeriesRetention, AFileOfTheFirstSchemaStillReads) {
  testing::ScratchDir dir("retention-test");
  const std::string path = (dir.path / kSeriesFileName).string();
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE streams(id INTEGER PRIMARY KEY, test INTEGER NOT NULL, agent TEXT NOT NULL,"
        " stream_id TEXT NOT NULL, kind TEXT NOT NULL, peer TEXT NOT NULL);"
        "CREATE TABLE layouts(id INTEGER PRIMARY KEY, stream INTEGER NOT NULL REFERENCES streams(id),"
        " counter_names TEXT NOT NULL, gauge_names TEXT NOT NULL);"
        "CREATE TABLE samples(stream INTEGER NOT NULL REFERENCES streams(id), sample INTEGER NOT NULL,"
        " elapsed_ms INTEGER NOT NULL, agent_time_ns INTEGER NOT NULL, layout INTEGER NOT NULL REFERENCES "
        "layouts(id), counter_values TEXT NOT NULL, gauge_values TEXT NOT NULL);"
        "INSERT INTO meta VALUES ('schema', '1'), ('run_id', 'old');"
        "INSERT INTO streams VALUES (1, 0, 'lab-b', 'rx:lab-a/1', 'rx', 'lab-a');"
        "INSERT INTO layouts VALUES (1, 1, '[\"rx_bytes\",\"lost_frames\"]', '[\"latency_p99_ns\"]');"
        "INSERT INTO samples VALUES (1, 2, 200, 0, 1, '2500,3', '');"
        "INSERT INTO samples VALUES (1, 1, 100, 0, 1, '1250,0', '1000.5');");
  }
  const auto rows = testing::printed_series_rows(dir.path.string(), {}, SeriesResolution::Night);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["sample"], 1);
  EXPECT_EQ(rows[0]["gauges"]["latency_p99_ns"], 1000.5);
  EXPECT_EQ(rows[1]["counters"]["rx_bytes"], 1250);
  EXPECT_EQ(rows[1]["counters"]["lost_frames"], 3);
  EXPECT_TRUE(rows[1]["gauges"].empty());
  EXPECT_THROW(testing::printed_series_rows(dir.path.string(), {}, SeriesResolution::Minutes), std::runtime_error);
  const RunOutcome drawn = outcome_from_series(path);
  EXPECT_EQ(drawn.run_id, "old");
  ASSERT_EQ(drawn.tests.at(0).streams.size(), 1u);
  EXPECT_EQ(drawn.tests[0].streams[0].stream.counters().at("rx_bytes"), 2500u);
}

// A row someone rewrote: the reader names the file and what it found, and reads nothing past it.
TEST(SeriesRetention, ARowThatLiesIsAnErrorNamingTheFile) {
  testing::ScratchDir dir("retention-test");
  const std::string path = (dir.path / kSeriesFileName).string();
  {
    SeriesFile file(path, "run");
    const auto layout =
        std::make_shared<const StreamLayout>(std::vector<std::string>{"rx_bytes"}, std::vector<std::string>{});
    proto::StreamCounters info;
    info.set_stream_id("rx:1");
    const auto row = file.stream_row(0, "x", info);
    proto::Sample sample;
    sample.set_index(1);
    const std::vector<std::uint64_t> values{5};
    file.append(row, sample, layout, values, {}, 0);
  }
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("UPDATE samples SET samples = 40, data = x'ffffffff'");
  }
  std::ostringstream out;
  try {
    print_series(dir.path.string(), {}, SeriesFormat::Table, out);
    FAIL() << "a row that lies is read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("series.sqlite: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a row claims 40 samples in 4 bytes"), std::string::npos) << e.what();
  }
  // And a row of minutes whose minute claims more bytes than the row has.
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("DELETE FROM samples; UPDATE rollups SET minutes = 2, data = x'0501'");
  }
  try {
    print_series(dir.path.string(), {}, SeriesFormat::Table, out, SeriesResolution::Minutes);
    FAIL() << "a row of minutes that lies is read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("series.sqlite: stream 1: a minute past its row"), std::string::npos)
        << e.what();
  }
}

TEST(SeriesRetention, TheProfilesSeriesKeysAreReadAndBounded) {
  const Profile profile = testing::load_profile_yaml(R"(
name: x
agents: {count: 2}
series: {full: 30m, margin: 1m, budget: 2 GiB}
tests:
  - {name: t, engine: rdma, duration: 1s}
)");
  EXPECT_EQ(profile.series.full, 30min);
  EXPECT_EQ(profile.series.margin, 1min);
  EXPECT_EQ(profile.series.budget, std::uint64_t{2} << 30);
  EXPECT_EQ(SeriesRetention{}.full, testing::load_profile_yaml(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 1s}
)")
                                        .series.full);
  std::string error;
  for (const auto& line : testing::profile_errors(R"(
name: x
agents: {count: 2}
series: {full: 10s, budget: 1 KiB, keep: all}
tests:
  - {name: t, engine: rdma, duration: 1s}
)")) {
    error += line + "\n";
  }
  EXPECT_NE(error.find("bad.yaml:3:16: series.full: full 10s is below the minimum 60s"), std::string::npos) << error;
  EXPECT_NE(error.find("bad.yaml:3:29: series.budget: budget 1 KiB is below the minimum 64 MiB"), std::string::npos)
      << error;
  EXPECT_NE(error.find("bad.yaml:3:36: series.keep: unknown key; expected one of: full, margin, budget"),
            std::string::npos)
      << error;
}

// A window is judged when the next one ends: a horizon shorter than two windows and the margin
// would prune a failed window's rows before the run knew to keep them.
TEST(SeriesRetention, TheFullHorizonOutlivesTwiceTheLongestWindowAndTheMargin) {
  const Profile profile = testing::load_profile_yaml(R"(
name: x
agents: {count: 2}
series: {full: 15m, margin: 1m}
tests:
  - {name: short, engine: dpdk, duration: 2h, thresholds: {window: 5m, max_lost_frames: 0}}
  - {name: long, engine: dpdk, duration: 2h, thresholds: {window: 20m, max_lost_frames: 0}}
  - {name: none, engine: dpdk, duration: 2h}
)");
  const SeriesRetention retention = series_retention_of(profile);
  EXPECT_EQ(retention.full, 41min) << "2 x 20 min + 1 min";
  EXPECT_EQ(retention.margin, 1min);
  EXPECT_EQ(series_retention_of(testing::load_profile_yaml(R"(
name: x
agents: {count: 2}
series: {full: 1h}
tests:
  - {name: short, engine: dpdk, duration: 2h, thresholds: {window: 5m, max_lost_frames: 0}}
)"))
                .full,
            1h)
      << "a horizon longer than the floor stays";
}

}  // namespace
}  // namespace tusk
