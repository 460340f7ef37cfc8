#include "controller/series/series_file.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <iterator>

namespace tusk {

namespace {

constexpr std::size_t kRowsPerCommit = 50'000;
constexpr auto kCommitEvery = std::chrono::milliseconds(250);

void append_json_string(fmt::memory_buffer& out, const std::string& text) {
  out.push_back('"');
  for (const char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    // Control characters never reach here: the run makes every name printable().
    out.push_back(c);
  }
  out.push_back('"');
}

template <typename Map, typename Write>
std::string json_object(const Map& map, Write write_value) {
  fmt::memory_buffer out;
  out.push_back('{');
  bool first = true;
  for (const auto& [name, value] : map) {
    if (!first) out.push_back(',');
    first = false;
    append_json_string(out, name);
    out.push_back(':');
    write_value(out, value);
  }
  out.push_back('}');
  return fmt::to_string(out);
}

}  // namespace

SeriesFile::SeriesFile(const std::string& path, const std::string& run_id) try
    : path_(path), db_(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE) {
  db_.exec("PRAGMA journal_mode=WAL");
  db_.exec("PRAGMA synchronous=NORMAL");
  db_.exec(
      "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "CREATE TABLE IF NOT EXISTS streams(id INTEGER PRIMARY KEY, test INTEGER NOT NULL, agent TEXT NOT NULL,"
      " stream_id TEXT NOT NULL, kind TEXT NOT NULL, peer TEXT NOT NULL);"
      "CREATE TABLE IF NOT EXISTS samples(stream INTEGER NOT NULL REFERENCES streams(id), sample INTEGER NOT NULL,"
      " elapsed_ms INTEGER NOT NULL, agent_time_ns INTEGER NOT NULL, counters TEXT NOT NULL, gauges TEXT NOT NULL,"
      " PRIMARY KEY(stream, sample)) WITHOUT ROWID;");
  SQLite::Statement meta(db_, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)");
  for (const auto& [key, value] : {std::pair<const char*, std::string>{"schema", std::to_string(kSeriesSchemaVersion)},
                                   {"run_id", run_id}}) {
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
}

void SeriesFile::append(const std::string& agent, const proto::Sample& sample) {
  std::vector<SampleRow> rows;
  rows.reserve(static_cast<std::size_t>(sample.streams_size()));
  std::lock_guard lock(mutex_);
  for (const auto& stream : sample.streams()) {
    if (queued_ - written_ >= kMaxQueuedSeriesRows || !failure_.empty()) {
      ++dropped_;
      continue;
    }
    const auto key = std::make_tuple(sample.test_index(), agent, stream.stream_id());
    auto id = stream_ids_.find(key);
    if (id == stream_ids_.end()) {
      id = stream_ids_.emplace(key, static_cast<std::int64_t>(stream_ids_.size() + 1)).first;
      queued_streams_.push_back(
          {id->second, sample.test_index(), agent, stream.stream_id(), stream.kind(), stream.peer()});
    }
    // Sorted by name, so a stream's rows read alike whatever order the agent's map had.
    const std::map<std::string, std::uint64_t> counters(stream.counters().begin(), stream.counters().end());
    const std::map<std::string, double> gauges(stream.gauges().begin(), stream.gauges().end());
    queued_samples_.push_back(
        {id->second, sample.index(), sample.elapsed_ms(), sample.agent_time_ns(),
         json_object(counters, [](fmt::memory_buffer& out, std::uint64_t v) { fmt::format_to(std::back_inserter(out), "{}", v); }),
         json_object(gauges, [](fmt::memory_buffer& out, double v) {
           if (std::isfinite(v)) {
             fmt::format_to(std::back_inserter(out), "{}", v);
           } else {
             fmt::format_to(std::back_inserter(out), "null");
           }
         })});
    ++queued_;
  }
  if (queued_samples_.size() >= kRowsPerCommit) wake_.notify_one();
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
    return fmt::format("{}: {} sample rows dropped: the disk fell more than {} rows behind", path_, dropped_,
                       kMaxQueuedSeriesRows);
  }
  return std::nullopt;
}

void SeriesFile::write_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, kCommitEvery, [&] {
      return stopping_ || flush_wanted_ || queued_samples_.size() >= kRowsPerCommit;
    });
    flush_wanted_ = false;
    std::vector<StreamRow> streams;
    std::vector<SampleRow> samples;
    streams.swap(queued_streams_);
    samples.swap(queued_samples_);
    const bool last = stopping_;
    if (failure_.empty() && (!streams.empty() || !samples.empty())) {
      lock.unlock();
      std::string failed;
      try {
        commit(streams, samples);
      } catch (const std::exception& e) {
        failed = fmt::format("{}: writing the series stopped: {}", path_, e.what());
        spdlog::error("{}", failed);
      }
      lock.lock();
      if (failed.empty()) {
        written_ += samples.size();
      } else {
        failure_ = std::move(failed);
      }
    }
    done_.notify_all();
    if (last && queued_samples_.empty()) return;
  }
}

void SeriesFile::commit(std::vector<StreamRow>& streams, std::vector<SampleRow>& samples) {
  SQLite::Transaction transaction(db_);
  SQLite::Statement add_stream(db_,
                               "INSERT INTO streams(id, test, agent, stream_id, kind, peer) VALUES (?, ?, ?, ?, ?, ?)");
  for (const auto& row : streams) {
    add_stream.bind(1, static_cast<std::int64_t>(row.id));
    add_stream.bind(2, row.test);
    add_stream.bind(3, row.agent);
    add_stream.bind(4, row.stream_id);
    add_stream.bind(5, row.kind);
    add_stream.bind(6, row.peer);
    add_stream.exec();
    add_stream.reset();
  }
  SQLite::Statement add_sample(db_,
                               "INSERT OR IGNORE INTO samples(stream, sample, elapsed_ms, agent_time_ns, counters, "
                               "gauges) VALUES (?, ?, ?, ?, ?, ?)");
  for (const auto& row : samples) {
    add_sample.bind(1, static_cast<std::int64_t>(row.stream));
    add_sample.bind(2, static_cast<std::int64_t>(row.sample));
    add_sample.bind(3, static_cast<std::int64_t>(row.elapsed_ms));
    add_sample.bind(4, static_cast<std::int64_t>(row.agent_time_ns));
    add_sample.bind(5, row.counters);
    add_sample.bind(6, row.gauges);
    add_sample.exec();
    add_sample.reset();
  }
  transaction.commit();
}

}  // namespace tusk
