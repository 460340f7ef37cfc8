#include "controller/series/series_file.hpp"

#include <SQLiteCpp/VariadicBind.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <iterator>

#include "common/json_text.hpp"
#include "common/units.hpp"

namespace tusk {

namespace {

constexpr std::size_t kRowsPerCommit = 50'000;
constexpr auto kCommitEvery = std::chrono::milliseconds(250);

std::string names_json(const std::vector<std::string>& names) {
  return json_text(nlohmann::json(names), -1);
}

// Appends `values` comma-separated and a '\0' to `out`; returns where they begin.
std::size_t append_counters(std::string& out, std::span<const std::uint64_t> values) {
  const std::size_t begin = out.size();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(',');
    const fmt::format_int number(values[i]);
    out.append(number.data(), number.size());
  }
  out.push_back('\0');
  return begin;
}

// A gauge that is no number (NaN, infinite) is written as nothing between its commas.
std::size_t append_gauges(std::string& out, std::span<const double> values) {
  const std::size_t begin = out.size();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(',');
    if (std::isfinite(values[i])) fmt::format_to(std::back_inserter(out), "{}", values[i]);
  }
  out.push_back('\0');
  return begin;
}

}  // namespace

SeriesFile::SeriesFile(const std::string& path, const std::string& run_id, SeriesQueueLimits limits) try
    : path_(path), limits_(limits), db_(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE) {
  db_.setBusyTimeout(static_cast<int>(std::chrono::milliseconds(kSeriesLockWait).count()));
  db_.exec("PRAGMA journal_mode=WAL");
  db_.exec("PRAGMA synchronous=NORMAL");
  db_.exec("PRAGMA cache_size=-2048");  // 2 MiB: rows are appended, so a commit touches few pages
  db_.exec(
      "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "CREATE TABLE streams(id INTEGER PRIMARY KEY, test INTEGER NOT NULL, agent TEXT NOT NULL,"
      " stream_id TEXT NOT NULL, kind TEXT NOT NULL, peer TEXT NOT NULL);"
      "CREATE TABLE layouts(id INTEGER PRIMARY KEY, stream INTEGER NOT NULL REFERENCES streams(id),"
      " counter_names TEXT NOT NULL, gauge_names TEXT NOT NULL);"
      "CREATE TABLE samples(stream INTEGER NOT NULL REFERENCES streams(id), sample INTEGER NOT NULL,"
      " elapsed_ms INTEGER NOT NULL, agent_time_ns INTEGER NOT NULL, layout INTEGER NOT NULL REFERENCES layouts(id),"
      " counter_values TEXT NOT NULL, gauge_values TEXT NOT NULL);");
  SQLite::Statement meta(db_, "INSERT INTO meta(key, value) VALUES (?, ?)");
  for (const auto& [key, value] :
       {std::pair<const char*, std::string>{"schema", std::to_string(kSeriesSchemaVersion)}, {"run_id", run_id}}) {
    meta.bind(1, key);
    meta.bind(2, value);
    meta.exec();
    meta.reset();
  }
  writer_ = std::thread([this] { write_loop(); });
} catch (const SQLite::Exception& e) {
  throw std::runtime_error(fmt::format("{}: cannot write the series file: {}", path, e.what()));
}

SeriesFile::~SeriesFile() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  writer_.join();
  // The rows were appended as they came: indexed by stream once, as the run ends, and the write-ahead
  // log folded in, so a reader opens the one file read-only and leaves nothing beside it.
  try {
    db_.exec(fmt::format("CREATE INDEX IF NOT EXISTS {} ON samples(stream, sample)", kSeriesIndexName));
    db_.exec("PRAGMA journal_mode=DELETE");
  } catch (const SQLite::Exception& e) {
    spdlog::warn("{}: not indexed as the run ended: {}", path_, e.what());
  }
}

std::int64_t SeriesFile::stream_row(int test, const std::string& agent, const proto::StreamCounters& info) {
  std::lock_guard lock(mutex_);
  streams_.emplace_back();
  const auto row = static_cast<std::int64_t>(streams_.size());
  queue_.streams.push_back({row, test, agent, info.stream_id(), info.kind(), info.peer()});
  return row;
}

std::size_t SeriesFile::append(std::int64_t stream_row, const proto::Sample& sample,
                               const std::shared_ptr<const StreamLayout>& layout,
                               std::span<const std::uint64_t> counters, std::span<const double> gauges) {
  std::lock_guard lock(mutex_);
  if (stream_row < 1 || static_cast<std::size_t>(stream_row) > streams_.size()) return 0;
  if (queued_ - written_ >= limits_.rows || queue_.text.size() >= limits_.bytes || !failure_.empty()) {
    ++dropped_;
    return 0;
  }
  StreamEntry& stream = streams_[static_cast<std::size_t>(stream_row - 1)];
  std::size_t bytes = 0;
  if (stream.layout != layout) {
    stream.layout = layout;
    stream.layout_id = ++layouts_;
    queue_.layouts.push_back({stream.layout_id, stream_row, names_json(layout->counters), names_json(layout->gauges)});
    bytes += queue_.layouts.back().counter_names.size() + queue_.layouts.back().gauge_names.size();
  }
  const std::size_t text_before = queue_.text.size();
  const std::size_t counter_text = append_counters(queue_.text, counters);
  const std::size_t gauge_text = append_gauges(queue_.text, gauges);
  queue_.samples.push_back({stream_row, stream.layout_id, sample.index(), sample.elapsed_ms(), sample.agent_time_ns(),
                            counter_text, gauge_text});
  ++queued_;
  if (queue_.samples.size() >= kRowsPerCommit) wake_.notify_one();
  return bytes + (queue_.text.size() - text_before) + sizeof(SampleRow);
}

void SeriesFile::flush() {
  std::unique_lock lock(mutex_);
  const std::uint64_t target = queued_;
  flush_wanted_ = true;
  wake_.notify_one();
  done_.wait(lock, [&] { return written_ >= target || !failure_.empty(); });
}

std::uint64_t SeriesFile::rows_written() const {
  std::lock_guard lock(mutex_);
  return written_;
}

std::optional<std::string> SeriesFile::problem() const {
  std::lock_guard lock(mutex_);
  if (!failure_.empty()) return failure_;
  if (dropped_ > 0) {
    return fmt::format(
        "{}: {} sample rows dropped: its writer fell more than {} rows or {} behind (a slow disk, or another process "
        "holding the file)",
        path_, dropped_, limits_.rows, units::format_size(limits_.bytes));
  }
  return std::nullopt;
}

void SeriesFile::Queue::clear() {
  streams.clear();
  layouts.clear();
  samples.clear();
  text.clear();
}

void SeriesFile::write_loop() {
  Queue committing;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, kCommitEvery,
                   [&] { return stopping_ || flush_wanted_ || queue_.samples.size() >= kRowsPerCommit; });
    flush_wanted_ = false;
    committing.clear();
    std::swap(committing, queue_);
    const bool last = stopping_;
    if (failure_.empty() && !committing.empty()) {
      lock.unlock();
      std::string failed;
      try {
        commit(committing);
      } catch (const std::exception& e) {
        failed = fmt::format("{}: writing the series stopped: {}", path_, e.what());
        spdlog::error("{}", failed);
      }
      lock.lock();
      if (failed.empty()) {
        written_ += committing.samples.size();
      } else {
        failure_ = std::move(failed);
      }
    }
    done_.notify_all();
    // A queue that grew while the disk was behind is not kept at that size.
    if (committing.samples.capacity() > 2 * kRowsPerCommit) committing = Queue{};
    if (last && queue_.empty()) return;
  }
}

void SeriesFile::commit(const Queue& queue) {
  SQLite::Transaction transaction(db_);
  SQLite::Statement add_stream(db_,
                               "INSERT INTO streams(id, test, agent, stream_id, kind, peer) VALUES (?, ?, ?, ?, ?, ?)");
  for (const auto& row : queue.streams) {
    SQLite::bind(add_stream, row.id, row.test, row.agent, row.stream_id, row.kind, row.peer);
    add_stream.exec();
    add_stream.reset();
  }
  SQLite::Statement add_layout(db_, "INSERT INTO layouts(id, stream, counter_names, gauge_names) VALUES (?, ?, ?, ?)");
  for (const auto& row : queue.layouts) {
    SQLite::bind(add_layout, row.id, row.stream, row.counter_names, row.gauge_names);
    add_layout.exec();
    add_layout.reset();
  }
  SQLite::Statement add_sample(db_,
                               "INSERT INTO samples(stream, sample, elapsed_ms, agent_time_ns, layout, counter_values, "
                               "gauge_values) VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (const auto& row : queue.samples) {
    SQLite::bind(add_sample, row.stream, static_cast<std::int64_t>(row.sample),
                 static_cast<std::int64_t>(row.elapsed_ms), row.agent_time_ns, row.layout);
    add_sample.bindNoCopy(6, queue.text.c_str() + row.counters);
    add_sample.bindNoCopy(7, queue.text.c_str() + row.gauges);
    add_sample.exec();
    add_sample.reset();
  }
  transaction.commit();
}

}  // namespace tusk
