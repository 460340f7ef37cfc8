// The run's series on disk, made for a night (schema 2): every sample of every stream is appended
// as it arrives to RUN_DIR/series.sqlite, so the controller holds none of them
// (controller/outcome/stream_series.hpp keeps the bins).
// - Full resolution: a row per stream and commit, its samples packed (series_codec.hpp):
//   cumulative counters (a missing row leaves the next one exact) and gauges, in the order of the
//   stream's layout row (their names, written once per stream and again when they change).
// - Per minute: a rollup per stream and minute (least, most and sum of each counter's changes, its
//   last value; least, most, mean and last of each gauge), kept for the whole run.
// - Retention (SeriesRetention): full-resolution rows older than `full` on the run's clock are
//   deleted, except those within `margin` of an event (an event counter of the stream grew) or of a
//   window the run judged failed (keep()); past `budget` the oldest full rows go first, whatever
//   they held. Neither stops the run, and what was dropped is said by problem()/stats().
// `tusk-controller series` prints the rows as deltas, with the minutes where no full row is left.
//
// append() runs on the io thread and only copies into a queue; one writer thread packs and commits
// it in batched transactions (WAL). A queue past kMaxQueuedSeriesRows or kMaxQueuedSeriesBytes (the
// disk far behind, or the file locked by another process) drops samples and counts them, and a
// failing write stops the file: both are said by problem(), never silent.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "controller/outcome/stream_layout.hpp"
#include "controller/profile/series_settings.hpp"
#include "controller/series/series_track.hpp"
#include "tusk.pb.h"

namespace tusk {

inline constexpr const char* kSeriesFileName = "series.sqlite";
inline constexpr int kSeriesSchemaVersion = 2;
// The text rows of the first schema: still read (a run directory of an earlier release).
inline constexpr int kSeriesTextSchemaVersion = 1;
inline constexpr const char* kSeriesIndexName = "samples_by_stream";
inline constexpr std::chrono::milliseconds kSeriesMinute{60'000};
inline constexpr std::size_t kMaxQueuedSeriesRows = 1 << 18;  // about 40 MB of rows, 6 s of 4,096 streams at 100 ms
// And in bytes of values waiting (twice this with the batch being written): rows of many counters
// each are as bounded as many rows.
inline constexpr std::size_t kMaxQueuedSeriesBytes = std::size_t{64} << 20;
// What one agent may write to the file in a test, per sample and stream its plan allows (values
// and layout names as text): an honest stream's row is ~0.4 KiB, a NIC's with hundreds of ethtool
// counters ~3 KiB. Past it the agent's samples are still judged, no longer written (RunData).
inline constexpr std::size_t kSeriesBytesPerStreamSample = 4 * 1024;
// How long a commit waits for another process that holds the file's write lock (an operator's
// `sqlite3 series.sqlite`) before the file is given up; rows queue meanwhile, within their bounds.
inline constexpr std::chrono::seconds kSeriesLockWait{30};

// What the queue may hold before rows are dropped (a test sets smaller ones).
struct SeriesQueueLimits {
  std::size_t rows = kMaxQueuedSeriesRows;
  std::size_t bytes = kMaxQueuedSeriesBytes;
};

// What the file holds and what retention took out of it, in samples.
struct SeriesFileStats {
  std::uint64_t samples_written = 0;  // at full resolution, ever
  std::uint64_t samples_pruned = 0;   // full rows past `full`, no event or failed window near them
  std::uint64_t samples_over_budget = 0;
  std::uint64_t rollups_written = 0;
  std::uint64_t used_bytes = 0;    // the file's pages in use, at the last check
  bool full_rows_stopped = false;  // rollups alone reached the budget
};

class SeriesFile {
 public:
  // Creates `path` (its directory must exist) for run `run_id`. Throws std::runtime_error naming
  // the file when it cannot.
  SeriesFile(const std::string& path, const std::string& run_id, SeriesQueueLimits limits = {},
             SeriesRetention retention = {});
  // Commits what is queued, and every stream's last minute.
  ~SeriesFile();
  SeriesFile(const SeriesFile&) = delete;
  SeriesFile& operator=(const SeriesFile&) = delete;

  const std::string& path() const { return path_; }

  // The file's row for one stream of `agent` in `test` (`info`: its ids), made the first time;
  // the run keeps it with the stream (StreamSeries::series_row). Streams are bounded by the run.
  std::int64_t stream_row(int test, const std::string& agent, const proto::StreamCounters& info);
  // Queues one sample of the stream `stream_row` named: `counters` and `gauges` its values in
  // `layout`'s order; `run_ms` the sample's time on the run's clock, which retention goes by (the
  // run's, not the agent's: one agent's clock must not age the others' rows). Returns the bytes it
  // queued (0 for a sample dropped).
  std::size_t append(std::int64_t stream_row, const proto::Sample& sample,
                     const std::shared_ptr<const StreamLayout>& layout, std::span<const std::uint64_t> counters,
                     std::span<const double> gauges, std::uint64_t run_ms);
  // Keeps the stream's full-resolution rows from `from_ms` to `to_ms` (its elapsed time) past
  // `full`, with the margin around them: a window the run judged failed.
  void keep(std::int64_t stream_row, std::uint64_t from_ms, std::uint64_t to_ms);
  // Waits until every row queued so far is committed (or the file has failed).
  void flush();

  // Samples committed at full resolution.
  std::uint64_t rows_written() const;
  SeriesFileStats stats() const;
  // What went wrong, if anything: samples dropped, a failed write, full rows given up to the budget.
  std::optional<std::string> problem() const;

 private:
  struct StreamRow {
    std::int64_t id;
    int test;
    std::string agent, stream_id, kind, peer;
  };
  struct LayoutRow {
    std::int64_t id, stream;
    std::string counter_names, gauge_names;  // JSON arrays
    std::size_t counters, gauges;
    std::vector<int> events;  // the counters whose growth is an event (StreamLayout::tracked)
  };
  // Its values lie in the queue's arrays, where the io thread copied them: a sample costs no
  // allocation of its own.
  struct SampleRow {
    std::int64_t stream, layout;
    std::uint32_t sample;
    std::uint64_t elapsed_ms, run_ms;
    std::int64_t agent_time_ns;
    std::size_t counters, gauges;  // offsets in the queue's arrays
  };
  struct KeepRow {
    std::int64_t stream;
    std::uint64_t from_ms, to_ms;
  };
  // What the writer commits at once. The writer hands back the one it committed, emptied with its
  // room kept, so the queue stops allocating once it has grown to a commit's size.
  struct Queue {
    std::vector<StreamRow> streams;
    std::vector<LayoutRow> layouts;
    std::vector<SampleRow> samples;
    std::vector<KeepRow> keeps;
    std::vector<std::uint64_t> counters;
    std::vector<double> gauges;
    bool empty() const { return streams.empty() && layouts.empty() && samples.empty() && keeps.empty(); }
    std::size_t bytes() const { return (counters.size() + gauges.size()) * 8 + samples.size() * sizeof(SampleRow); }
    void clear();
  };
  // What the io thread knows of a stream: the layout its last sample was queued in.
  struct StreamEntry {
    std::shared_ptr<const StreamLayout> layout;
    std::int64_t layout_id = 0;
  };
  // A commit's last row and the newest run time among its samples: rows up to it are old once the
  // run's clock is `full` past that time.
  struct CommitMark {
    std::int64_t last_rowid;
    std::uint64_t newest_run_ms;
  };

  void write_loop();
  void commit(const Queue& queue, bool close_rows = false);
  // The writer's part of a sample: its minute, its row, its events.
  void fold(const SampleRow& sample, const Queue& queue);
  void switch_layout(std::int64_t stream, SeriesTrack& track, const LayoutRow& layout);
  void finish_row(std::int64_t stream, SeriesTrack& track);
  void write_rollup(std::int64_t stream, SeriesTrack& track, bool end_row = false);
  // series_retention.cpp: old rows out, stale minutes written, the budget held.
  void retain();
  void prune_old_rows();
  void hold_budget();
  std::uint64_t used_bytes();
  static void kept_function(sqlite3_context* context, int count, sqlite3_value** values);

  std::string path_;
  SeriesQueueLimits limits_;
  SeriesRetention retention_;
  std::uint32_t minutes_per_row_;
  SQLite::Database db_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<StreamEntry> streams_;  // by stream row - 1
  std::int64_t layouts_ = 0;
  Queue queue_;
  std::uint64_t queued_ = 0, written_ = 0, dropped_ = 0;
  std::string failure_;
  bool stopping_ = false, flush_wanted_ = false;
  SeriesFileStats stats_;  // under mutex_

  // The writer thread's own.
  std::vector<SeriesTrack> tracks_;            // by stream row - 1
  std::vector<const LayoutRow*> layout_rows_;  // the committing queue's, by id: where a sample's layout is
  std::vector<std::int64_t> open_rows_;        // streams with a row being packed
  struct MinuteRow {
    std::int64_t stream, minute, layout;  // minute: its first
    std::uint32_t minutes;
    std::string blob;  // each minute's rollup, its length first
  };
  std::vector<MinuteRow> minutes_;  // rollups to insert with the next commit
  struct FullRow {
    std::int64_t stream, layout;
    std::uint64_t first_ms, last_ms, newest_run_ms;
    std::uint32_t samples;
    std::string blob;
  };
  std::vector<FullRow> rows_;  // packed rows to insert with the next commit
  std::deque<CommitMark> marks_;
  std::uint64_t clock_ms_ = 0, pruned_at_ms_ = 0;
  std::int64_t pruned_upto_ = 0;
  SeriesFileStats writer_stats_;
  std::thread writer_;
};

}  // namespace tusk
