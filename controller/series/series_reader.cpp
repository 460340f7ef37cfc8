#include "controller/series/series_reader.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "common/counter_names.hpp"
#include "common/json_text.hpp"
#include "common/ordered_json.hpp"
#include "common/rates.hpp"
#include "controller/series/series_file.hpp"

namespace tusk {

namespace {

using json = nlohmann::ordered_json;

// One row as printed: the counters as changes since the stream's previous row.
struct Row {
  int test = 0;
  std::string agent, stream_id, kind;
  std::int64_t sample = 0, elapsed_ms = 0, interval_ms = 0;
  std::map<std::string, std::uint64_t> deltas;
  json gauges;
  std::optional<double> throughput_bps;
  // A minute's: its index, how many samples it folded, and the least, most and mean of each value.
  const SeriesRollup* minute = nullptr;
  std::int64_t minute_index = 0;
  json counters_min, counters_max, gauges_min, gauges_max, gauges_mean;
};

// Calls `each` with every row `query` picks, in order.
template <typename Each>
std::uint64_t for_each_row(SeriesFileReader& reader, const SeriesQuery& query, SeriesResolution resolution, Each each) {
  std::int64_t stream = -1;
  std::map<std::string, std::uint64_t> before;
  std::int64_t before_ms = 0;
  return reader.for_each(query, resolution, [&](const SeriesStreamInfo& info, const SeriesPoint& point) {
    if (info.id != stream) {
      stream = info.id;
      before.clear();
      before_ms = 0;
    }
    Row row;
    row.test = info.test;
    row.agent = info.agent;
    row.stream_id = info.stream_id;
    row.kind = info.kind;
    row.sample = point.sample;
    row.elapsed_ms = static_cast<std::int64_t>(point.elapsed_ms);
    row.interval_ms = row.elapsed_ms - before_ms;
    std::map<std::string, std::uint64_t> now;
    for (std::size_t i = 0; i < point.names->counters.size() && i < point.counters.size(); ++i) {
      now.emplace(point.names->counters[i], point.counters[i]);
    }
    for (const auto& [name, value] : now) {
      const auto was = before.find(name);
      const std::uint64_t previous = was == before.end() ? 0 : was->second;
      row.deltas[name] = value >= previous ? value - previous : value;
    }
    row.gauges = json::object();
    for (std::size_t i = 0; i < point.names->gauges.size() && i < point.gauges.size(); ++i) {
      if (std::isfinite(point.gauges[i]) && !row.gauges.contains(point.names->gauges[i])) {
        row.gauges[point.names->gauges[i]] = point.gauges[i];
      }
    }
    if (point.minute) {
      row.minute = point.minute;
      row.minute_index = point.minute_index;
      row.counters_min = row.counters_max = row.gauges_min = row.gauges_max = row.gauges_mean = json::object();
      for (std::size_t i = 0; i < point.names->counters.size() && i < point.minute->counters.size(); ++i) {
        row.counters_min[point.names->counters[i]] = point.minute->counters[i].min;
        row.counters_max[point.names->counters[i]] = point.minute->counters[i].max;
      }
      for (std::size_t i = 0; i < point.names->gauges.size() && i < point.minute->gauges.size(); ++i) {
        const auto& gauge = point.minute->gauges[i];
        if (gauge.count == 0) continue;
        row.gauges_min[point.names->gauges[i]] = gauge.min;
        row.gauges_max[point.names->gauges[i]] = gauge.max;
        row.gauges_mean[point.names->gauges[i]] = gauge.mean;
      }
    }
    const auto bytes = row.deltas.find(
        std::string(row.deltas.contains(std::string(counters::kRxBytes)) ? counters::kRxBytes : counters::kTxBytes));
    if (bytes != row.deltas.end() && row.interval_ms > 0) {
      row.throughput_bps = throughput_bps(static_cast<double>(bytes->second), row.interval_ms / 1e3);
    }
    each(row);
    before = std::move(now);
    before_ms = row.elapsed_ms;
  });
}

void print_json_lines(SeriesFileReader& db, const SeriesQuery& query, SeriesResolution resolution, std::ostream& out,
                      std::uint64_t& rows) {
  rows = for_each_row(db, query, resolution, [&](const Row& row) {
    json line{{"test", row.test},
              {"agent", row.agent},
              {"stream_id", row.stream_id},
              {"kind", row.kind},
              {"resolution", row.minute ? "minute" : "full"},
              {row.minute ? "samples" : "sample", row.sample},
              {"elapsed_ms", row.elapsed_ms},
              {"interval_ms", row.interval_ms},
              {"throughput_bps", row.throughput_bps ? json(*row.throughput_bps) : json(nullptr)},
              {"counters", row.deltas},
              {"gauges", row.gauges}};
    if (row.minute) {
      line["minute"] = row.minute_index;
      line["first_ms"] = row.minute->first_ms;
      line["counters_min"] = row.counters_min;
      line["counters_max"] = row.counters_max;
      line["gauges_min"] = row.gauges_min;
      line["gauges_max"] = row.gauges_max;
      line["gauges_mean"] = row.gauges_mean;
    }
    out << json_text(line, -1) << '\n';
  });
}

std::string csv_field(const std::string& agent_text) {
  // A cell a spreadsheet would run as a formula (=HYPERLINK(...), +, -, @, or a tab or CR first, as
  // OWASP lists them) is an agent's text, not a formula: a leading ' makes it text.
  const std::string text =
      !agent_text.empty() && std::string_view("=+-@\t\r").find(agent_text.front()) != std::string_view::npos
          ? "'" + agent_text
          : agent_text;
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

void print_csv(SeriesFileReader& db, const SeriesQuery& query, SeriesResolution resolution, std::ostream& out,
               std::uint64_t& rows) {
  // The columns are every counter and gauge any picked row has: one pass to find them, one to print.
  std::set<std::string> counter_names, gauge_names;
  for_each_row(db, query, resolution, [&](const Row& row) {
    for (const auto& [name, delta] : row.deltas) counter_names.insert(name);
    for (const auto& [name, value] : row.gauges.items()) gauge_names.insert(name);
  });
  // A minute's row: its resolution says so, and its sample column counts the samples it folded.
  out << "test,agent,stream_id,kind,resolution,sample,elapsed_ms,interval_ms,throughput_bps";
  for (const auto& name : counter_names) out << ',' << csv_field(name);
  for (const auto& name : gauge_names) out << ',' << csv_field("gauge." + name);
  out << '\n';
  rows = for_each_row(db, query, resolution, [&](const Row& row) {
    out << fmt::format("{},{},{},{},{},{},{},{},{}", row.test, csv_field(row.agent), csv_field(row.stream_id),
                       csv_field(row.kind), row.minute ? "minute" : "full", row.sample, row.elapsed_ms, row.interval_ms,
                       row.throughput_bps ? fmt::format("{:.0f}", *row.throughput_bps) : std::string());
    for (const auto& name : counter_names) {
      const auto it = row.deltas.find(name);
      out << ',' << (it == row.deltas.end() ? std::string() : std::to_string(it->second));
    }
    for (const auto& name : gauge_names) {
      const json& value = member_or_null(row.gauges, name.c_str());
      out << ',' << (value.is_number() ? value.dump() : std::string());
    }
    out << '\n';
  });
}

void print_table(SeriesFileReader& db, const SeriesQuery& query, SeriesResolution resolution, std::ostream& out,
                 std::uint64_t& rows) {
  rows = for_each_row(db, query, resolution, [&](const Row& row) {
    std::string changed;
    for (const auto& [name, delta] : row.deltas) {
      if (delta == 0) continue;
      changed += fmt::format(" {}={}", name, delta);
      // A minute's most in one sample tells a burst from a trickle.
      if (row.minute && row.counters_max.contains(name))
        changed += fmt::format(" (at most {} a sample)", row.counters_max[name].get<std::int64_t>());
    }
    const std::string at = row.minute ? fmt::format("minute {} ({} samples)", row.minute_index, row.sample)
                                      : fmt::format("#{}", row.sample);
    out << fmt::format("test {} {} {} {} {:.1f} s {}{}\n", row.test, row.agent, row.stream_id, at, row.elapsed_ms / 1e3,
                       row.throughput_bps ? fmt::format("{:.0f} bit/s", *row.throughput_bps) : std::string("-"),
                       changed);
  });
}

}  // namespace

std::uint64_t print_series(const std::string& run, const SeriesQuery& query, SeriesFormat format, std::ostream& out,
                           SeriesResolution resolution) {
  namespace fs = std::filesystem;
  const fs::path path = fs::is_directory(run) ? fs::path(run) / kSeriesFileName : fs::path(run);
  if (!fs::exists(path)) throw std::runtime_error(fmt::format("{}: no series file there", path.string()));
  if (path.filename() != kSeriesFileName && !fs::is_directory(run)) {
    std::ifstream head(path, std::ios::binary);
    char magic[16] = {};
    head.read(magic, sizeof magic);
    if (std::string_view(magic, static_cast<std::size_t>(head.gcount())) != std::string_view("SQLite format 3\0", 16)) {
      throw std::runtime_error(
          fmt::format("{}: not a series file (an SQLite database); give the run's directory or its {}", path.string(),
                      kSeriesFileName));
    }
  }
  std::uint64_t rows = 0;
  try {
    // Read-only: a reader writes nothing into the run's directory (the run indexed the file as it
    // ended; a run that never ended is read unindexed, sorted as it is read).
    SeriesFileReader db(path.string());
    switch (format) {
      case SeriesFormat::Table:
        print_table(db, query, resolution, out, rows);
        break;
      case SeriesFormat::Csv:
        print_csv(db, query, resolution, out, rows);
        break;
      case SeriesFormat::Json:
        print_json_lines(db, query, resolution, out, rows);
        break;
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", path.string(), e.what()));
  }
  return rows;
}

}  // namespace tusk
