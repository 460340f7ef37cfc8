// The series file: every sample admitted is a row, read back as deltas, whatever order and
// however many streams; a row per stream and sample, never more.
#include "controller/series/series_file.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "controller/run/run_data.hpp"
#include "controller/series/series_reader.hpp"
#include "tests/support/series_scratch.hpp"

namespace tusk {
namespace {

namespace fs = std::filesystem;

proto::Sample sample_of(int test, std::uint32_t index, int streams) {
  proto::Sample sample;
  sample.set_run_id("run");
  sample.set_test_index(test);
  sample.set_index(index);
  sample.set_elapsed_ms(index * 100);
  for (int s = 0; s < streams; ++s) {
    auto* stream = sample.add_streams();
    stream->set_stream_id("rx:peer/" + std::to_string(s));
    stream->set_kind("rx");
    stream->set_peer("peer");
    (*stream->mutable_counters())["rx_bytes"] = 1250ull * index * (s + 1);
    (*stream->mutable_counters())["lost_frames"] = index >= 5 ? 3 : 0;
    (*stream->mutable_gauges())["latency_p99_ns"] = 1000.5 * index;
  }
  return sample;
}

// Appends each stream of a sample as the run does: a row per stream, in the layout of its names.
struct Appender {
  SeriesFile& file;
  std::map<std::string, std::int64_t> rows;
  std::map<std::string, std::shared_ptr<const StreamLayout>> layouts;

  void append(const std::string& agent, const proto::Sample& sample) {
    for (const auto& stream : sample.streams()) {
      std::vector<std::string> counter_names, gauge_names;
      std::vector<std::uint64_t> counters;
      std::vector<double> gauges;
      for (const auto& [name, value] : stream.counters()) counter_names.push_back(name), counters.push_back(value);
      for (const auto& [name, value] : stream.gauges()) gauge_names.push_back(name), gauges.push_back(value);
      const std::string key = std::to_string(sample.test_index()) + " " + agent + " " + stream.stream_id();
      auto& layout = layouts[key];
      if (!layout || !layout->same_names(counter_names, gauge_names)) {
        layout = std::make_shared<const StreamLayout>(counter_names, gauge_names);
      }
      if (!rows.contains(key)) rows[key] = file.stream_row(sample.test_index(), agent, stream);
      file.append(rows[key], sample, layout, counters, gauges, sample.elapsed_ms());
    }
  }
};

TEST(SeriesFile, EverySampleIsARowReadBackAsDeltas) {
  testing::ScratchDir dir("series-test");
  {
    SeriesFile file((dir.path / kSeriesFileName).string(), "run");
    Appender appender{file, {}, {}};
    for (std::uint32_t i = 1; i <= 10; ++i) appender.append("lab-b", sample_of(0, i, 3));
    appender.append("lab-b", sample_of(1, 1, 1));
    file.flush();
    EXPECT_EQ(file.rows_written(), 31u);
    EXPECT_FALSE(file.problem());
  }
  const auto all = testing::printed_series_rows(dir.path.string(), {});
  ASSERT_EQ(all.size(), 31u);
  {
    // Rows are appended as they come; the file was indexed by stream as it closed, and the reader
    // left nothing beside it (issue 57: it wrote -wal and -shm files into the run's directory).
    SQLite::Database db((dir.path / kSeriesFileName).string(), SQLite::OPEN_READONLY);
    EXPECT_EQ(db.execAndGet(std::string("SELECT count(*) FROM sqlite_master WHERE name = '") + kSeriesIndexName + "'")
                  .getInt(),
              1);
    EXPECT_EQ(db.execAndGet("PRAGMA journal_mode").getString(), "delete");
  }
  for (const auto& entry : std::filesystem::directory_iterator(dir.path)) {
    EXPECT_EQ(entry.path().filename(), kSeriesFileName) << "the reader wrote " << entry.path();
  }
  const auto one = testing::printed_series_rows(dir.path.string(), {0, "lab-b", "rx:peer/1"});
  ASSERT_EQ(one.size(), 10u);
  for (std::size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i]["sample"], i + 1);
    EXPECT_EQ(one[i]["counters"]["rx_bytes"], 2500) << "the change since the previous sample: " << one[i];
    EXPECT_EQ(one[i]["interval_ms"], 100);
    EXPECT_DOUBLE_EQ(one[i]["throughput_bps"].get<double>(), 200'000);
    EXPECT_DOUBLE_EQ(one[i]["gauges"]["latency_p99_ns"].get<double>(), 1000.5 * (i + 1));
  }
  EXPECT_EQ(one[4]["counters"]["lost_frames"], 3);
  EXPECT_EQ(one[5]["counters"]["lost_frames"], 0);
  EXPECT_EQ(testing::printed_series_rows(dir.path.string(), {1, "", ""}).size(), 1u);
  std::ostringstream csv;
  EXPECT_EQ(print_series(dir.path.string(), {0, "", "rx:peer/0"}, SeriesFormat::Csv, csv), 10u);
  EXPECT_EQ(csv.str().substr(0, csv.str().find('\n')),
            "test,agent,stream_id,kind,resolution,sample,elapsed_ms,interval_ms,throughput_bps,lost_frames,rx_bytes,"
            "gauge.latency_p99_ns");
}

// Issue 63, before: `series --csv` wrote agent-chosen cells that spreadsheets run as formulas.
// Issue 63: an agent's rows of a test are bounded in bytes by what its plan allows
// (kSeriesBytesPerStreamSample per sample and stream). Before, rows of every admitted sample were
// written whatever their size: 300 counters of 20 digits each, 6 KiB a row, for every sample.
TEST(SeriesFile, AnAgentsRowsStopAtItsBudgetWithOneFaultAndAreStillJudged) {
  testing::ScratchDir dir("series-test");
  SeriesFile file((dir.path / kSeriesFileName).string(), "run");
  constexpr std::uint32_t kSamples = 100;
  RunData data("run", {kSamples});
  data.expect("a", 0, 1);  // one stream: 100 x 4 KiB
  data.expect("b", 0, 1);
  data.write_series_to(&file);
  for (std::uint32_t index = 1; index <= kSamples; ++index) {
    for (const std::string agent : {"a", "b"}) {
      proto::Record record;
      auto& sample = *record.mutable_sample();
      sample.set_run_id("run");
      sample.set_index(index);
      auto& stream = *sample.add_streams();
      stream.set_stream_id("rx:x/1");
      stream.set_kind("rx");
      // a: 600 counters (within the wire's 8 KiB a stream; 8 bytes each queued, 4.8 KiB a sample);
      // b: an honest stream's few.
      for (int c = 0; c < (agent == "a" ? 600 : 20); ++c) {
        (*stream.mutable_counters())[fmt::format("c{:03}", c)] = agent == "a" ? index : std::uint64_t{index} * 1000;
      }
      data.on_record(agent, std::move(record));
    }
  }
  file.flush();
  EXPECT_FALSE(file.problem());
  data.with([&](RunState& s) {
    EXPECT_EQ(s.tests.at({0, "a"}).samples.size(), kSamples) << "every sample is still judged";
    ASSERT_EQ(s.faults.size(), 1u);
    EXPECT_EQ(s.faults[0].agent, "a");
    EXPECT_NE(s.faults[0].message.find("its later samples are judged but not written"), std::string::npos)
        << s.faults[0].message;
  });
  // b's 100 samples and the 400 KiB of a's that fit (4.8 KiB each with the sample's own room, the
  // layout's names once): about 80.
  EXPECT_GT(file.rows_written(), kSamples + 60);
  EXPECT_LT(file.rows_written(), kSamples + 95);
}

TEST(SeriesFile, ACsvCellAnAgentChoseIsNeverAFormula) {
  testing::ScratchDir dir("series-test");
  {
    SeriesFile file((dir.path / kSeriesFileName).string(), "run");
    Appender appender{file, {}, {}};
    appender.append("=HYPERLINK(\"http://x\",\"y\")", sample_of(0, 1, 1));
    appender.append("@sum", sample_of(0, 1, 1));
    file.flush();
  }
  std::ostringstream csv;
  ASSERT_EQ(print_series(dir.path.string(), {}, SeriesFormat::Csv, csv), 2u);
  const std::string text = csv.str();
  EXPECT_NE(text.find("\n0,\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\","), std::string::npos) << text;
  EXPECT_NE(text.find("\n0,'@sum,"), std::string::npos) << text;
  EXPECT_EQ(text.find(",="), std::string::npos) << text;
  EXPECT_EQ(text.find(",@"), std::string::npos) << text;
}

// Issue 57, before: `series RUN/report.json` said "file is not a database".
TEST(SeriesFile, AReportGivenForItsSeriesFileIsSaidSo) {
  testing::ScratchDir dir("series-test");
  std::ofstream(dir.path / "report.json") << "{\"run_id\": \"r\"}";
  std::ostringstream out;
  try {
    print_series((dir.path / "report.json").string(), {}, SeriesFormat::Table, out);
    FAIL() << "a report is no series file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("report.json: not a series file (an SQLite database); give the run's "
                                         "directory or its series.sqlite"),
              std::string::npos)
        << e.what();
  }
}

TEST(SeriesFile, AFileThatIsNoSeriesFileIsNamedInTheError) {
  testing::ScratchDir dir("series-test");
  std::ostringstream out;
  try {
    print_series(dir.path.string(), {}, SeriesFormat::Table, out);
    FAIL() << "no file there";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("series.sqlite: no series file there"), std::string::npos) << e.what();
  }
}

// Before: the queue's byte bound (kMaxQueuedSeriesBytes) was held by no test, and a commit that
// met another process's lock on the file failed at once and stopped the file for the rest of the
// run. Now a commit waits for the lock (kSeriesLockWait) while rows queue, within their bytes:
// rows of many counters stop at the byte bound long before the row bound, are counted, and what
// was queued is written once the lock goes.
TEST(SeriesFile, WhileAnotherProcessHoldsTheFileRowsQueueOnlyToTheirByteBoundAndTheRestAreCounted) {
  testing::ScratchDir dir("series-test");
  const std::string path = (dir.path / kSeriesFileName).string();
  constexpr std::size_t kBound = 1 << 20;
  SeriesFile file(path, "run", {.rows = 1'000'000, .bytes = kBound});
  std::vector<std::string> names;
  for (int c = 0; c < 1000; ++c) names.push_back(fmt::format("counter_{}", c));
  const auto layout = std::make_shared<const StreamLayout>(names, std::vector<std::string>{});
  const std::vector<std::uint64_t> values(names.size(), 18'446'744'073'709'551'000ull);  // 20 digits each
  proto::StreamCounters info;
  info.set_stream_id("port:p0");
  const std::int64_t row = file.stream_row(0, "a", info);

  SQLite::Database other(path, SQLite::OPEN_READWRITE);
  other.exec("BEGIN EXCLUSIVE");  // what `sqlite3 series.sqlite` holds while it writes
  std::size_t queued_bytes = 0, accepted = 0;
  constexpr std::uint32_t kRows = 400;  // ~21 KB each: 8 MB offered, 8 times the bound
  for (std::uint32_t index = 1; index <= kRows; ++index) {
    proto::Sample sample;
    sample.set_index(index);
    const std::size_t bytes = file.append(row, sample, layout, values, {}, index);
    queued_bytes += bytes;
    accepted += bytes > 0 ? 1 : 0;
  }
  // The queue the writer took to commit (waiting on the lock) and the one that filled behind it.
  EXPECT_LE(queued_bytes, 2 * kBound + 2 * 25'000);
  EXPECT_LT(accepted, kRows / 2);
  ASSERT_TRUE(file.problem());
  EXPECT_NE(file.problem()->find(fmt::format("{} sample rows dropped", kRows - accepted)), std::string::npos)
      << *file.problem();
  EXPECT_NE(file.problem()->find("or 1 MiB behind"), std::string::npos) << *file.problem();
  other.exec("ROLLBACK");
  file.flush();
  EXPECT_EQ(file.rows_written(), accepted) << "the file was not given up: what was queued is written";
}

}  // namespace
}  // namespace tusk
