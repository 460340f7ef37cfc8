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
// A stream's full-resolution row: at most this many samples, over at most this much of the run.
constexpr std::uint32_t kSamplesPerRow = 64;
constexpr std::chrono::milliseconds kRowSpan{10'000};
constexpr std::int64_t kMostMinutesPerRow = 10;
constexpr auto kCommitEvery = std::chrono::milliseconds(250);

std::string names_json(const std::vector<std::string>& names) {
  return json_text(nlohmann::json(names), -1);
}

// The counters whose growth is an event: a full-resolution row near one outlives the retention.
std::vector<int> event_counters(const StreamLayout& layout) {
  std::vector<int> events;
  for (const auto tracked :
       {StreamLayout::kLost, StreamLayout::kGapLost, StreamLayout::kErrored, StreamLayout::kIntegrity,
        StreamLayout::kCompletion, StreamLayout::kRetransmits, StreamLayout::kTrafficGaps, StreamLayout::kLinkFlaps}) {
    if (layout.tracked[tracked] >= 0) events.push_back(layout.tracked[tracked]);
  }
  return events;
}

}  // namespace

SeriesFile::SeriesFile(const std::string& path, const std::string& run_id, SeriesQueueLimits limits,
                       SeriesRetention retention) try
    : path_(path),
      limits_(limits),
      retention_(retention),
      // A killed run keeps the minutes not yet written at full resolution: fewer than `full` holds.
      minutes_per_row_(static_cast<std::uint32_t>(
          std::clamp<std::int64_t>(retention.full / kSeriesMinute - 1, 1, kMostMinutesPerRow))),
      db_(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE) {
  db_.setBusyTimeout(static_cast<int>(std::chrono::milliseconds(kSeriesLockWait).count()));
  db_.exec("PRAGMA journal_mode=WAL");
  db_.exec("PRAGMA synchronous=NORMAL");
  db_.exec("PRAGMA cache_size=-2048");  // 2 MiB: rows are appended, so a commit touches few pages
  // Full rows' ids only grow (AUTOINCREMENT), even after the budget emptied the table: retention
  // goes by them. Rollups are indexed as they come (a stream's night is read by it, even from a run that never
  // ended); full rows, a hundred times as many, only as the run ends.
  db_.exec(
      "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "CREATE TABLE streams(id INTEGER PRIMARY KEY, test INTEGER NOT NULL, agent TEXT NOT NULL,"
      " stream_id TEXT NOT NULL, kind TEXT NOT NULL, peer TEXT NOT NULL);"
      "CREATE TABLE layouts(id INTEGER PRIMARY KEY, stream INTEGER NOT NULL REFERENCES streams(id),"
      " counter_names TEXT NOT NULL, gauge_names TEXT NOT NULL);"
      "CREATE TABLE samples(id INTEGER PRIMARY KEY AUTOINCREMENT, stream INTEGER NOT NULL REFERENCES streams(id),"
      " layout INTEGER NOT NULL REFERENCES layouts(id), first_ms INTEGER NOT NULL, last_ms INTEGER NOT NULL,"
      " samples INTEGER NOT NULL, data BLOB NOT NULL);"
      "CREATE TABLE rollups(stream INTEGER NOT NULL REFERENCES streams(id), minute INTEGER NOT NULL,"
      " layout INTEGER NOT NULL REFERENCES layouts(id), minutes INTEGER NOT NULL, data BLOB NOT NULL);"
      "CREATE INDEX rollups_by_stream ON rollups(stream, minute);");
  SQLite::Statement meta(db_, "INSERT INTO meta(key, value) VALUES (?, ?)");
  for (const auto& [key, value] : {std::pair<const char*, std::string>{"schema", std::to_string(kSeriesSchemaVersion)},
                                   {"run_id", run_id},
                                   {"full_ms", std::to_string(retention.full.count())},
                                   {"margin_ms", std::to_string(retention.margin.count())},
                                   {"budget_bytes", std::to_string(retention.budget)}}) {
    meta.bind(1, key);
    meta.bind(2, value);
    meta.exec();
    meta.reset();
  }
  db_.createFunction("tusk_kept", 3, true, this, &SeriesFile::kept_function);
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
  // Every stream's last minute, then the rows indexed by stream once, as the run ends, and the
  // write-ahead log folded in, so a reader opens the one file read-only and leaves nothing beside it.
  try {
    for (std::size_t i = 0; i < tracks_.size(); ++i) {
      write_rollup(static_cast<std::int64_t>(i + 1), tracks_[i], /*end_row=*/true);
    }
    if (failure_.empty()) commit(Queue{}, /*close_rows=*/true);
    db_.exec(fmt::format("CREATE INDEX IF NOT EXISTS {} ON samples(stream, first_ms)", kSeriesIndexName));
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
                               std::span<const std::uint64_t> counters, std::span<const double> gauges,
                               std::uint64_t run_ms) {
  std::lock_guard lock(mutex_);
  if (stream_row < 1 || static_cast<std::size_t>(stream_row) > streams_.size()) return 0;
  if (queued_ - written_ >= limits_.rows || queue_.bytes() >= limits_.bytes || !failure_.empty()) {
    ++dropped_;
    return 0;
  }
  StreamEntry& stream = streams_[static_cast<std::size_t>(stream_row - 1)];
  std::size_t bytes = 0;
  if (stream.layout != layout) {
    stream.layout = layout;
    stream.layout_id = ++layouts_;
    queue_.layouts.push_back({stream.layout_id, stream_row, names_json(layout->counters), names_json(layout->gauges),
                              layout->counters.size(), layout->gauges.size(), event_counters(*layout)});
    bytes += queue_.layouts.back().counter_names.size() + queue_.layouts.back().gauge_names.size();
  }
  const std::size_t bytes_before = queue_.bytes();
  // The layout's count of values, whatever the spans hold: the writer packs the layout's shape.
  SampleRow row{stream_row, stream.layout_id,       sample.index(),         sample.elapsed_ms(),
                run_ms,     sample.agent_time_ns(), queue_.counters.size(), queue_.gauges.size()};
  for (std::size_t i = 0; i < layout->counters.size(); ++i)
    queue_.counters.push_back(i < counters.size() ? counters[i] : 0);
  for (std::size_t i = 0; i < layout->gauges.size(); ++i) {
    queue_.gauges.push_back(i < gauges.size() ? gauges[i] : std::numeric_limits<double>::quiet_NaN());
  }
  queue_.samples.push_back(row);
  ++queued_;
  if (queue_.samples.size() >= kRowsPerCommit) wake_.notify_one();
  return bytes + (queue_.bytes() - bytes_before);
}

void SeriesFile::keep(std::int64_t stream_row, std::uint64_t from_ms, std::uint64_t to_ms) {
  std::lock_guard lock(mutex_);
  if (stream_row < 1 || static_cast<std::size_t>(stream_row) > streams_.size()) return;
  queue_.keeps.push_back({stream_row, from_ms, to_ms});
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

SeriesFileStats SeriesFile::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
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
  if (stats_.samples_over_budget > 0) {
    return fmt::format(
        "{}: {} samples' full-resolution rows dropped to keep the file within its budget of {}{} (the minutes of "
        "every stream are all there)",
        path_, stats_.samples_over_budget, units::format_size(retention_.budget),
        stats_.full_rows_stopped ? "; the minutes alone filled it, so no full rows were written after" : "");
  }
  return std::nullopt;
}

void SeriesFile::Queue::clear() {
  streams.clear();
  layouts.clear();
  samples.clear();
  keeps.clear();
  counters.clear();
  gauges.clear();
}

void SeriesFile::write_loop() {
  Queue committing;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, kCommitEvery,
                   [&] { return stopping_ || flush_wanted_ || queue_.samples.size() >= kRowsPerCommit; });
    // A flush writes the rows being packed too: what it waited for is in the file.
    const bool close_rows = flush_wanted_ || stopping_;
    flush_wanted_ = false;
    committing.clear();
    std::swap(committing, queue_);
    const bool last = stopping_;
    if (failure_.empty() && (!committing.empty() || close_rows)) {
      lock.unlock();
      std::string failed;
      try {
        commit(committing, close_rows);
        retain();
      } catch (const std::exception& e) {
        failed = fmt::format("{}: writing the series stopped: {}", path_, e.what());
        spdlog::error("{}", failed);
      }
      lock.lock();
      stats_ = writer_stats_;
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

void SeriesFile::commit(const Queue& queue, bool close_rows) {
  for (const auto& layout : queue.layouts) {
    const auto id = static_cast<std::size_t>(layout.id);
    if (layout_rows_.size() <= id) layout_rows_.resize(id + 1, nullptr);
    layout_rows_[id] = &layout;
  }
  for (const auto& stream : queue.streams) {
    if (tracks_.size() < static_cast<std::size_t>(stream.id)) tracks_.resize(static_cast<std::size_t>(stream.id));
  }
  for (const auto& sample : queue.samples) fold(sample, queue);
  // A row stays open across commits (a row of many samples packs them tighter) until it is full,
  // spans kRowSpan of the run's clock, or a flush wants what was queued in the file.
  std::erase_if(open_rows_, [&](std::int64_t stream) {
    SeriesTrack& track = tracks_[static_cast<std::size_t>(stream - 1)];
    if (close_rows || clock_ms_ >= track.row_opened_run_ms + static_cast<std::uint64_t>(kRowSpan.count()))
      finish_row(stream, track);
    track.row_listed = track.row.samples() > 0;
    return !track.row_listed;
  });
  for (const auto& keep : queue.keeps) {
    tracks_[static_cast<std::size_t>(keep.stream - 1)].kept.add(
        keep.from_ms - std::min<std::uint64_t>(keep.from_ms, static_cast<std::uint64_t>(retention_.margin.count())),
        keep.to_ms + static_cast<std::uint64_t>(retention_.margin.count()));
  }

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
  SQLite::Statement add_row(db_,
                            "INSERT INTO samples(stream, layout, first_ms, last_ms, samples, data) VALUES (?, ?, ?, ?, "
                            "?, ?)");
  std::uint64_t newest_run_ms = 0;
  for (const auto& row : rows_) {
    newest_run_ms = std::max(newest_run_ms, row.newest_run_ms);
    SQLite::bind(add_row, row.stream, row.layout, static_cast<std::int64_t>(row.first_ms),
                 static_cast<std::int64_t>(row.last_ms), static_cast<std::int64_t>(row.samples));
    add_row.bindNoCopy(6, row.blob.data(), static_cast<int>(row.blob.size()));
    add_row.exec();
    add_row.reset();
    writer_stats_.samples_written += row.samples;
  }
  SQLite::Statement add_minute(db_,
                               "INSERT INTO rollups(stream, minute, layout, minutes, data) VALUES (?, ?, ?, ?, ?)");
  for (const auto& minute : minutes_) {
    SQLite::bind(add_minute, minute.stream, minute.minute, minute.layout, static_cast<std::int64_t>(minute.minutes));
    add_minute.bindNoCopy(5, minute.blob.data(), static_cast<int>(minute.blob.size()));
    add_minute.exec();
    add_minute.reset();
    writer_stats_.rollups_written += minute.minutes;
  }
  minutes_.clear();
  const bool wrote_rows = !rows_.empty();
  rows_.clear();
  transaction.commit();
  if (wrote_rows) marks_.push_back({db_.getLastInsertRowid(), newest_run_ms});
  for (const auto& layout : queue.layouts) layout_rows_[static_cast<std::size_t>(layout.id)] = nullptr;
}

void SeriesFile::fold(const SampleRow& sample, const Queue& queue) {
  SeriesTrack& track = tracks_[static_cast<std::size_t>(sample.stream - 1)];
  if (track.layout != sample.layout) {
    const auto id = static_cast<std::size_t>(sample.layout);
    if (id >= layout_rows_.size() || layout_rows_[id] == nullptr) return;  // cannot be: a layout precedes its samples
    switch_layout(sample.stream, track, *layout_rows_[id]);
  }
  const std::span<const std::uint64_t> counters(queue.counters.data() + sample.counters, track.counters);
  const std::span<const double> gauges(queue.gauges.data() + sample.gauges, track.gauges);
  // An event counter that grew keeps the rows around it past the retention.
  if (track.has_last) {
    for (const int event : track.events) {
      const auto i = static_cast<std::size_t>(event);
      if (counters[i] > track.last_counters[i]) {
        const auto margin = static_cast<std::uint64_t>(retention_.margin.count());
        track.kept.add(sample.elapsed_ms - std::min(sample.elapsed_ms, margin), sample.elapsed_ms + margin);
        break;
      }
    }
  }
  track.last_counters.assign(counters.begin(), counters.end());
  track.has_last = true;
  if (!track.minute.empty() &&
      track.minute.minute() != static_cast<std::int64_t>(sample.elapsed_ms / kSeriesMinute.count())) {
    write_rollup(sample.stream, track);
  }
  track.minute.add(sample.elapsed_ms, counters, gauges);
  track.last_run_ms = std::max(track.last_run_ms, sample.run_ms);
  clock_ms_ = std::max(clock_ms_, sample.run_ms);
  if (writer_stats_.full_rows_stopped) return;
  if (track.row.samples() == 0) {
    if (!track.row_listed) open_rows_.push_back(sample.stream);
    track.row_listed = true;
    track.row_first_ms = track.row_last_ms = sample.elapsed_ms;
    track.row_opened_run_ms = track.row_newest_run_ms = sample.run_ms;
  }
  track.row_first_ms = std::min(track.row_first_ms, sample.elapsed_ms);
  track.row_last_ms = std::max(track.row_last_ms, sample.elapsed_ms);
  track.row_newest_run_ms = std::max(track.row_newest_run_ms, sample.run_ms);
  track.row.add(sample.sample, sample.elapsed_ms, sample.agent_time_ns, counters, gauges);
  if (track.row.samples() >= kSamplesPerRow) finish_row(sample.stream, track);
}

// A new layout ends the stream's row being packed and its minute (a row and a rollup are each in
// one layout): both are written with this commit, and the new layout's samples start their own.
void SeriesFile::switch_layout(std::int64_t stream, SeriesTrack& track, const LayoutRow& layout) {
  finish_row(stream, track);
  write_rollup(stream, track, /*end_row=*/true);
  track.layout = layout.id;
  track.counters = layout.counters;
  track.gauges = layout.gauges;
  track.events = layout.events;
  track.has_last = false;
  track.minute.reset(track.counters, track.gauges);
}

void SeriesFile::finish_row(std::int64_t stream, SeriesTrack& track) {
  if (track.row.samples() == 0) return;
  rows_.push_back({stream, track.layout, track.row_first_ms, track.row_last_ms, track.row_newest_run_ms,
                   track.row.samples(), track.row.blob()});
  track.row.clear();
}

// A stream's minutes are written a row of minutes_per_row_ at a time (a row and its index entry
// cost about what a minute does); a row ends early with its layout, its stream or the run.
void SeriesFile::write_rollup(std::int64_t stream, SeriesTrack& track, bool end_row) {
  if (!track.minute.empty()) {
    if (track.batch_minutes == 0) track.batch_first_minute = track.minute.minute();
    const std::string blob = track.minute.take();
    BlobWriter(track.batch).varint(blob.size());
    track.batch += blob;
    ++track.batch_minutes;
  }
  if (track.batch_minutes == 0 || (!end_row && track.batch_minutes < minutes_per_row_)) return;
  minutes_.push_back({stream, track.batch_first_minute, track.layout, track.batch_minutes, std::move(track.batch)});
  track.batch.clear();
  track.batch_minutes = 0;
}

}  // namespace tusk
