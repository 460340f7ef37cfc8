// The run's full-resolution series on disk: every sample of every stream, appended as it arrives to
// RUN_DIR/series.sqlite, so the controller holds none of them (controller/outcome/stream_series.hpp
// keeps the bins). One row per stream and sample with its counters' values as the agent sent them
// (cumulative: a missing row leaves the next one exact) and its gauges', in the order of the
// stream's layout row (their names, written once per stream and again when they change);
// `tusk-controller series` prints them as deltas. Rows are appended in arrival order, so a run
// pays nothing to keep them sorted; the first read indexes them by stream (series_reader.hpp).
//
// append() runs on the io thread and only formats and queues; one writer thread commits the queue
// in batched transactions (WAL). A queue past kMaxQueuedSeriesRows or kMaxQueuedSeriesBytes (the
// disk far behind, or the file locked by another process) drops rows and counts them, and a
// failing write stops the file: both are said by problem(), never silent.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "controller/outcome/stream_layout.hpp"
#include "tusk.pb.h"

namespace tusk {

inline constexpr const char* kSeriesFileName = "series.sqlite";
inline constexpr int kSeriesSchemaVersion = 1;
inline constexpr const char* kSeriesIndexName = "samples_by_stream";
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

class SeriesFile {
 public:
  // Creates `path` (its directory must exist) for run `run_id`. Throws std::runtime_error naming
  // the file when it cannot.
  SeriesFile(const std::string& path, const std::string& run_id, SeriesQueueLimits limits = {});
  // Commits what is queued.
  ~SeriesFile();
  SeriesFile(const SeriesFile&) = delete;
  SeriesFile& operator=(const SeriesFile&) = delete;

  const std::string& path() const { return path_; }

  // The file's row for one stream of `agent` in `test` (`info`: its ids), made the first time;
  // the run keeps it with the stream (StreamSeries::series_row). Streams are bounded by the run.
  std::int64_t stream_row(int test, const std::string& agent, const proto::StreamCounters& info);
  // Queues one sample of the stream `stream_row` named: `counters` and `gauges` its values in
  // `layout`'s order. Returns the bytes it queued (0 for a row dropped).
  std::size_t append(std::int64_t stream_row, const proto::Sample& sample,
                     const std::shared_ptr<const StreamLayout>& layout, std::span<const std::uint64_t> counters,
                     std::span<const double> gauges);
  // Waits until every row queued so far is committed (or the file has failed).
  void flush();

  std::uint64_t rows_written() const;
  // What went wrong, if anything: rows dropped, a failed write.
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
  };
  // Its values are comma-separated text in the queue's `text`, each list ended by a '\0' (so the
  // writer binds them where they lie): a row costs no allocation of its own.
  struct SampleRow {
    std::int64_t stream, layout;
    std::uint32_t sample;
    std::uint64_t elapsed_ms;
    std::int64_t agent_time_ns;
    std::size_t counters, gauges;  // offsets in the queue's text
  };
  // What the writer commits at once. The writer hands back the one it committed, emptied with its
  // room kept, so the queue stops allocating once it has grown to a commit's size.
  struct Queue {
    std::vector<StreamRow> streams;
    std::vector<LayoutRow> layouts;
    std::vector<SampleRow> samples;
    std::string text;
    bool empty() const { return streams.empty() && layouts.empty() && samples.empty(); }
    void clear();
  };
  // What the file knows of a stream: the layout its last row was written in.
  struct StreamEntry {
    std::shared_ptr<const StreamLayout> layout;
    std::int64_t layout_id = 0;
  };
  void write_loop();
  void commit(const Queue& queue);

  std::string path_;
  SeriesQueueLimits limits_;
  SQLite::Database db_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<StreamEntry> streams_;  // by stream row - 1
  std::int64_t layouts_ = 0;
  Queue queue_;
  std::uint64_t queued_ = 0, written_ = 0, dropped_ = 0;
  std::string failure_;
  bool stopping_ = false, flush_wanted_ = false;
  std::thread writer_;
};

}  // namespace tusk
