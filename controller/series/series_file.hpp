// The run's full-resolution series on disk: every sample of every stream, appended as it arrives to
// RUN_DIR/series.sqlite, so the controller holds none of them (controller/outcome/stream_series.hpp
// keeps the bins). One row per stream and sample with its counters as the agent sent them
// (cumulative: a missing row leaves the next one exact) and its gauges; `tusk-controller series`
// prints them as deltas.
//
// append() runs on the io thread and only formats and queues; one writer thread commits the queue
// in batched transactions (WAL). A queue past kMaxQueuedSeriesRows (the disk far behind) drops rows
// and counts them, and a failing write stops the file: both are said by problem(), never silent.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tusk.pb.h"

namespace tusk {

inline constexpr const char* kSeriesFileName = "series.sqlite";
inline constexpr int kSeriesSchemaVersion = 1;
inline constexpr std::size_t kMaxQueuedSeriesRows = 1 << 20;

class SeriesFile {
 public:
  // Creates `path` (its directory must exist) for run `run_id`. Throws std::runtime_error naming
  // the file when it cannot.
  SeriesFile(const std::string& path, const std::string& run_id);
  // Commits what is queued.
  ~SeriesFile();
  SeriesFile(const SeriesFile&) = delete;
  SeriesFile& operator=(const SeriesFile&) = delete;

  const std::string& path() const { return path_; }

  // Queues one row per stream of `sample` from `agent`: streams already bounded by the run.
  void append(const std::string& agent, const proto::Sample& sample);
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
  struct SampleRow {
    std::int64_t stream;
    std::uint32_t sample;
    std::uint64_t elapsed_ms;
    std::int64_t agent_time_ns;
    std::string counters, gauges;
  };
  void write_loop();
  void commit(std::vector<StreamRow>& streams, std::vector<SampleRow>& samples);

  std::string path_;
  SQLite::Database db_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::map<std::tuple<int, std::string, std::string>, std::int64_t> stream_ids_;  // (test, agent, stream id)
  std::vector<StreamRow> queued_streams_;
  std::vector<SampleRow> queued_samples_;
  std::uint64_t queued_ = 0, written_ = 0, dropped_ = 0;
  std::string failure_;
  bool stopping_ = false, flush_wanted_ = false;
  std::thread writer_;
};

}  // namespace tusk
