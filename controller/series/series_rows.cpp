#include "controller/series/series_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "common/json_text.hpp"
#include "common/ordered_json.hpp"
#include "controller/series/series_file.hpp"

namespace tusk {

namespace {

constexpr double kNoGauge = std::numeric_limits<double>::quiet_NaN();

std::vector<std::string> names_in(const std::string& text) {
  std::vector<std::string> names;
  // OrderedJson: the file may come from anywhere, and ordered_json reads an object in n² time.
  for (const auto& name : parse_json<OrderedJson>(text)) {
    if (name.is_string()) names.push_back(name.get<std::string>());
  }
  return names;
}

// The comma-separated values of a schema 1 row, one per name; an empty one is `none`.
template <typename Value, typename Parse>
std::vector<Value> text_values(const std::string& text, std::size_t count, Value none, Parse parse) {
  std::vector<Value> values(count, none);
  std::size_t start = 0;
  for (std::size_t i = 0; i < count && start <= text.size(); ++i) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    if (end > start) values[i] = parse(text.substr(start, end - start));
    start = end + 1;
  }
  return values;
}

std::string where_of(const SeriesQuery& query) {
  std::string sql = " WHERE 1";
  if (query.test) sql += " AND s.test = :test";
  if (!query.agent.empty()) sql += " AND s.agent = :agent";
  if (!query.stream.empty()) sql += " AND s.stream_id = :stream";
  return sql;
}

void bind_query(SQLite::Statement& statement, const SeriesQuery& query) {
  if (query.test) statement.bind(":test", *query.test);
  if (!query.agent.empty()) statement.bind(":agent", query.agent);
  if (!query.stream.empty()) statement.bind(":stream", query.stream);
}

constexpr const char* kStreamOrder = " ORDER BY s.test, s.agent, s.stream_id, s.id";

}  // namespace

SeriesFileReader::SeriesFileReader(const std::string& path) : db_(path, SQLite::OPEN_READONLY) {
  db_.setBusyTimeout(10'000);
  const std::string schema = meta("schema");
  if (schema == std::to_string(kSeriesSchemaVersion)) {
    schema_ = kSeriesSchemaVersion;
  } else if (schema == std::to_string(kSeriesTextSchemaVersion)) {
    schema_ = kSeriesTextSchemaVersion;
  } else {
    throw std::runtime_error(
        fmt::format("not a series file of schema {} or {}", kSeriesTextSchemaVersion, kSeriesSchemaVersion));
  }
  SQLite::Statement select(db_, "SELECT id, counter_names, gauge_names FROM layouts");
  while (select.executeStep()) {
    layouts_[select.getColumn(0).getInt64()] = {names_in(select.getColumn(1).getString()),
                                                names_in(select.getColumn(2).getString())};
  }
}

std::string SeriesFileReader::meta(const std::string& key) {
  SQLite::Statement select(db_, "SELECT value FROM meta WHERE key = ?");
  select.bind(1, key);
  return select.executeStep() ? select.getColumn(0).getString() : std::string();
}

const SeriesNames& SeriesFileReader::names_of(std::int64_t layout) const {
  static const SeriesNames kNone;
  const auto found = layouts_.find(layout);
  return found == layouts_.end() ? kNone : found->second;
}

std::vector<SeriesPoint> SeriesFileReader::full_points(SQLite::Statement& rows, std::int64_t stream, bool& more) const {
  std::vector<SeriesPoint> points;
  while (more && rows.getColumn(0).getInt64() == stream) {
    const SeriesNames& names = names_of(rows.getColumn(1).getInt64());
    if (schema_ == kSeriesTextSchemaVersion) {
      SeriesPoint point;
      point.names = &names;
      point.sample = static_cast<std::uint32_t>(rows.getColumn(2).getInt64());
      point.elapsed_ms = static_cast<std::uint64_t>(rows.getColumn(3).getInt64());
      point.counters = text_values<std::uint64_t>(rows.getColumn(4).getString(), names.counters.size(), 0,
                                                  [](const std::string& t) { return std::stoull(t); });
      point.gauges = text_values<double>(rows.getColumn(5).getString(), names.gauges.size(), kNoGauge,
                                         [](const std::string& t) { return std::stod(t); });
      points.push_back(std::move(point));
    } else {
      const auto claimed = rows.getColumn(2).getInt64();
      const SQLite::Column data = rows.getColumn(3);
      const std::string_view blob(static_cast<const char*>(data.getBlob()), static_cast<std::size_t>(data.getBytes()));
      if (claimed < 0 || claimed > kMaxSamplesPerSeriesRow) {
        throw SeriesDecodeError(fmt::format("stream {}: a row of {} samples", stream, claimed));
      }
      for (auto& sample :
           decode_full_row(blob, static_cast<std::uint32_t>(claimed), names.counters.size(), names.gauges.size())) {
        SeriesPoint point;
        point.names = &names;
        point.sample = sample.sample;
        point.elapsed_ms = sample.elapsed_ms;
        point.counters = std::move(sample.counters);
        point.gauges = std::move(sample.gauges);
        points.push_back(std::move(point));
      }
    }
    more = rows.executeStep();
  }
  return points;
}

std::vector<SeriesPoint> SeriesFileReader::minute_points(SQLite::Statement& rows, std::int64_t stream, bool& more,
                                                         std::vector<SeriesRollup>& rollups) const {
  std::vector<SeriesPoint> points;
  std::vector<std::int64_t> layouts;
  std::vector<std::uint64_t> last;
  while (more && rows.getColumn(0).getInt64() == stream) {
    const std::int64_t layout = rows.getColumn(2).getInt64();
    const SeriesNames& names = names_of(layout);
    const auto minutes = rows.getColumn(3).getInt64();
    const SQLite::Column data = rows.getColumn(4);
    const std::string_view blob(static_cast<const char*>(data.getBlob()), static_cast<std::size_t>(data.getBytes()));
    if (minutes < 1 || static_cast<std::size_t>(minutes) > blob.size()) {
      throw SeriesDecodeError(fmt::format("stream {}: a row of {} minutes in {} bytes", stream, minutes, blob.size()));
    }
    std::size_t at = 0;
    for (std::int64_t m = 0; m < minutes; ++m) {
      // Each minute: its length, then its rollup.
      BlobReader length(blob.substr(at));
      const std::uint64_t size = length.varint();
      const std::size_t start = blob.size() - length.left();
      if (size > length.left()) throw SeriesDecodeError(fmt::format("stream {}: a minute past its row", stream));
      const std::string_view minute_blob = blob.substr(start, size);
      at = start + size;
      const SeriesRollup* before = !rollups.empty() && layouts.back() == layout ? &rollups.back() : nullptr;
      SeriesRollup rollup = decode_rollup(minute_blob, names.counters.size(), names.gauges.size(), before);
      if (!rollup.absolute && (before == nullptr || last.size() != names.counters.size())) {
        throw SeriesDecodeError(fmt::format("stream {}: a minute goes on from no minute before it", stream));
      }
      if (rollup.absolute) last.assign(names.counters.size(), 0);
      SeriesPoint point;
      point.names = &names;
      point.minute_index = static_cast<std::int64_t>(rollup.first_ms / kSeriesMinute.count());
      point.elapsed_ms = rollup.last_ms;
      point.sample = rollup.samples;
      for (std::size_t i = 0; i < last.size(); ++i) last[i] += static_cast<std::uint64_t>(rollup.counters[i].sum);
      point.counters = last;
      for (const auto& gauge : rollup.gauges) point.gauges.push_back(gauge.count > 0 ? gauge.last : kNoGauge);
      rollups.push_back(std::move(rollup));
      layouts.push_back(layout);
      points.push_back(std::move(point));
    }
    if (at != blob.size())
      throw SeriesDecodeError(fmt::format("stream {}: a row of minutes has bytes left over", stream));
    more = rows.executeStep();
  }
  // Pointed at only once the vector stops growing.
  for (std::size_t i = 0; i < points.size(); ++i) points[i].minute = &rollups[i];
  return points;
}

std::uint64_t SeriesFileReader::for_each(const SeriesQuery& query, SeriesResolution resolution,
                                         const std::function<void(const SeriesStreamInfo&, const SeriesPoint&)>& each) {
  if (resolution == SeriesResolution::Minutes && schema_ == kSeriesTextSchemaVersion) {
    throw std::runtime_error("written by a release that kept no minutes (schema 1): read it at full resolution");
  }
  const std::string where = where_of(query);
  SQLite::Statement streams(
      db_, "SELECT s.id, s.test, s.agent, s.stream_id, s.kind, s.peer FROM streams s" + where + kStreamOrder);
  bind_query(streams, query);
  const bool with_full = resolution != SeriesResolution::Minutes;
  const bool with_minutes = resolution != SeriesResolution::Full && schema_ == kSeriesSchemaVersion;
  // A run that never ended has no index on its full rows: they are sorted as they are read.
  SQLite::Statement full(
      db_, schema_ == kSeriesTextSchemaVersion
               ? "SELECT x.stream, x.layout, x.sample, x.elapsed_ms, x.counter_values, x.gauge_values FROM samples x "
                 "JOIN streams s ON s.id = x.stream" +
                     where + kStreamOrder + ", x.sample"
               : "SELECT x.stream, x.layout, x.samples, x.data FROM samples x JOIN streams s ON s.id = x.stream" +
                     where + kStreamOrder + ", x.first_ms, x.id");
  SQLite::Statement minutes(
      db_, schema_ == kSeriesTextSchemaVersion
               ? std::string("SELECT 0, 0, 0, 0, x'' WHERE 0")
               : "SELECT r.stream, r.minute, r.layout, r.minutes, r.data FROM rollups r JOIN streams s ON s.id = "
                 "r.stream" +
                     where + kStreamOrder + ", r.minute");
  if (schema_ == kSeriesSchemaVersion) bind_query(minutes, query);
  bind_query(full, query);
  bool more_full = with_full && full.executeStep();
  bool more_minutes = with_minutes && minutes.executeStep();
  std::uint64_t count = 0;
  while (streams.executeStep()) {
    const SeriesStreamInfo info{streams.getColumn(0).getInt64(),  streams.getColumn(1).getInt(),
                                streams.getColumn(2).getString(), streams.getColumn(3).getString(),
                                streams.getColumn(4).getString(), streams.getColumn(5).getString()};
    const std::vector<SeriesPoint> samples = full_points(full, info.id, more_full);
    std::vector<SeriesRollup> rollups;
    std::vector<SeriesPoint> minute_rows = minute_points(minutes, info.id, more_minutes, rollups);
    // A night: each minute that kept no full-resolution sample shows as its rollup.
    std::set<std::int64_t> covered;
    for (const auto& point : samples)
      covered.insert(static_cast<std::int64_t>(point.elapsed_ms / kSeriesMinute.count()));
    std::size_t s = 0;
    for (const auto& minute : minute_rows) {
      if (covered.contains(minute.minute_index)) continue;
      while (s < samples.size() && samples[s].elapsed_ms < minute.minute->first_ms) each(info, samples[s++]), ++count;
      each(info, minute);
      ++count;
    }
    for (; s < samples.size(); ++s, ++count) each(info, samples[s]);
  }
  return count;
}

}  // namespace tusk
