// A series file read back stream by stream (series_file.hpp): its full-resolution samples and its
// minutes, decoded, in the order `tusk-controller series` prints them. Reads both schemas: the
// packed rows and rollups of schema 2 and the text rows of schema 1 (run directories of earlier
// releases), which have no minutes. Everything read is bounded: a file that lies throws, naming
// what it found.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/series/series_codec.hpp"

namespace tusk {

struct SeriesQuery {
  std::optional<int> test;  // one test's rows; none: every test's
  std::string agent;        // the streams this agent measured; "": every agent's
  std::string stream;       // one stream id ("rx:lab-a/1"); "": every stream
};

enum class SeriesResolution {
  Night,    // every full-resolution sample left, and the minutes that have none (a night, whole)
  Full,     // the full-resolution samples left
  Minutes,  // a row per minute
};

struct SeriesStreamInfo {
  std::int64_t id = 0;
  int test = 0;
  std::string agent, stream_id, kind, peer;
};

struct SeriesNames {
  std::vector<std::string> counters, gauges;
};

// One row as read: a sample, or a minute. Counters are cumulative (a minute's: its last value).
struct SeriesPoint {
  const SeriesNames* names = nullptr;
  std::uint64_t elapsed_ms = 0;  // the sample's; a minute's last sample's
  std::uint32_t sample = 0;      // a sample's index
  std::vector<std::uint64_t> counters;
  std::vector<double> gauges;            // a minute's: each gauge's last; NaN: none
  const SeriesRollup* minute = nullptr;  // set for a minute: its least, most and mean
  std::int64_t minute_index = 0;
};

class SeriesFileReader {
 public:
  // Opens `path` read-only. Throws std::runtime_error when it is no series file of a known schema.
  explicit SeriesFileReader(const std::string& path);
  int schema() const { return schema_; }
  std::string meta(const std::string& key);
  // Calls `each` with every point of the streams `query` picks, in test, agent, stream and time
  // order. Returns the points.
  std::uint64_t for_each(const SeriesQuery& query, SeriesResolution resolution,
                         const std::function<void(const SeriesStreamInfo&, const SeriesPoint&)>& each);

 private:
  const SeriesNames& names_of(std::int64_t layout) const;
  // The stream's samples (minutes) under a cursor ordered as the streams are: it is left on the
  // next stream's first row; `more`: whether there is one.
  std::vector<SeriesPoint> full_points(SQLite::Statement& rows, std::int64_t stream, bool& more) const;
  std::vector<SeriesPoint> minute_points(SQLite::Statement& rows, std::int64_t stream, bool& more,
                                         std::vector<SeriesRollup>& rollups) const;

  SQLite::Database db_;
  int schema_ = 0;
  std::map<std::int64_t, SeriesNames> layouts_;
};

}  // namespace tusk
