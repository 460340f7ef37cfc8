#include "controller/series/series_reader.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
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
};

std::string sql_of(const SeriesQuery& query) {
  std::string sql =
      "SELECT s.id, s.test, s.agent, s.stream_id, s.kind, x.sample, x.elapsed_ms, x.layout, x.counter_values, "
      "x.gauge_values FROM samples x JOIN streams s ON s.id = x.stream WHERE 1";
  if (query.test) sql += " AND s.test = :test";
  if (!query.agent.empty()) sql += " AND s.agent = :agent";
  if (!query.stream.empty()) sql += " AND s.stream_id = :stream";
  return sql + " ORDER BY s.test, s.agent, s.stream_id, s.id, x.sample";
}

struct Names {
  std::vector<std::string> counters, gauges;
};

std::vector<std::string> names_of(const std::string& text) {
  std::vector<std::string> names;
  // OrderedJson: the file may come from anywhere, and ordered_json reads an object in n² time.
  for (const auto& name : parse_json<OrderedJson>(text)) {
    if (name.is_string()) names.push_back(name.get<std::string>());
  }
  return names;
}

std::map<std::int64_t, Names> layouts_of(SQLite::Database& db) {
  std::map<std::int64_t, Names> layouts;
  SQLite::Statement select(db, "SELECT id, counter_names, gauge_names FROM layouts");
  while (select.executeStep()) {
    layouts[select.getColumn(0).getInt64()] = {names_of(select.getColumn(1).getString()),
                                               names_of(select.getColumn(2).getString())};
  }
  return layouts;
}

// The comma-separated values of a row, one per name; an empty one (a gauge that was no number) is
// left out, and so is any past the names.
template <typename Value, typename Parse>
std::vector<std::pair<std::string, Value>> values_of(const std::string& text, const std::vector<std::string>& names,
                                                     Parse parse) {
  std::vector<std::pair<std::string, Value>> values;
  std::size_t start = 0;
  for (std::size_t i = 0; i < names.size() && start <= text.size(); ++i) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    if (end > start) values.emplace_back(names[i], parse(text.substr(start, end - start)));
    start = end + 1;
  }
  return values;
}

// Calls `each` with every row `query` picks, in order.
template <typename Each>
std::uint64_t for_each_row(SQLite::Database& db, const SeriesQuery& query, Each each) {
  const std::map<std::int64_t, Names> layouts = layouts_of(db);
  static const Names kNone;
  SQLite::Statement select(db, sql_of(query));
  if (query.test) select.bind(":test", *query.test);
  if (!query.agent.empty()) select.bind(":agent", query.agent);
  if (!query.stream.empty()) select.bind(":stream", query.stream);
  std::int64_t stream = -1;
  std::map<std::string, std::uint64_t> before;
  std::int64_t before_ms = 0;
  std::uint64_t rows = 0;
  while (select.executeStep()) {
    Row row;
    if (select.getColumn(0).getInt64() != stream) {
      stream = select.getColumn(0).getInt64();
      before.clear();
      before_ms = 0;
    }
    row.test = select.getColumn(1).getInt();
    row.agent = select.getColumn(2).getString();
    row.stream_id = select.getColumn(3).getString();
    row.kind = select.getColumn(4).getString();
    row.sample = select.getColumn(5).getInt64();
    row.elapsed_ms = select.getColumn(6).getInt64();
    row.interval_ms = row.elapsed_ms - before_ms;
    const auto layout = layouts.find(select.getColumn(7).getInt64());
    const Names& names = layout == layouts.end() ? kNone : layout->second;
    std::map<std::string, std::uint64_t> now;
    for (auto& [name, value] : values_of<std::uint64_t>(select.getColumn(8).getString(), names.counters,
                                                        [](const std::string& t) { return std::stoull(t); })) {
      now.emplace(std::move(name), value);
    }
    for (const auto& [name, value] : now) {
      const auto was = before.find(name);
      const std::uint64_t previous = was == before.end() ? 0 : was->second;
      row.deltas[name] = value >= previous ? value - previous : value;
    }
    row.gauges = json::object();
    for (const auto& [name, value] : values_of<double>(select.getColumn(9).getString(), names.gauges,
                                                       [](const std::string& t) { return std::stod(t); })) {
      if (!row.gauges.contains(name)) row.gauges[name] = value;
    }
    const auto bytes = row.deltas.find(
        std::string(row.deltas.contains(std::string(counters::kRxBytes)) ? counters::kRxBytes : counters::kTxBytes));
    if (bytes != row.deltas.end() && row.interval_ms > 0) {
      row.throughput_bps = throughput_bps(static_cast<double>(bytes->second), row.interval_ms / 1e3);
    }
    each(row);
    before = std::move(now);
    before_ms = row.elapsed_ms;
    ++rows;
  }
  return rows;
}

void print_json_lines(SQLite::Database& db, const SeriesQuery& query, std::ostream& out, std::uint64_t& rows) {
  rows = for_each_row(db, query, [&](const Row& row) {
    json line{{"test", row.test},
              {"agent", row.agent},
              {"stream_id", row.stream_id},
              {"kind", row.kind},
              {"sample", row.sample},
              {"elapsed_ms", row.elapsed_ms},
              {"interval_ms", row.interval_ms},
              {"throughput_bps", row.throughput_bps ? json(*row.throughput_bps) : json(nullptr)},
              {"counters", row.deltas},
              {"gauges", row.gauges}};
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

void print_csv(SQLite::Database& db, const SeriesQuery& query, std::ostream& out, std::uint64_t& rows) {
  // The columns are every counter and gauge any picked row has: one pass to find them, one to print.
  std::set<std::string> counter_names, gauge_names;
  for_each_row(db, query, [&](const Row& row) {
    for (const auto& [name, delta] : row.deltas) counter_names.insert(name);
    for (const auto& [name, value] : row.gauges.items()) gauge_names.insert(name);
  });
  out << "test,agent,stream_id,kind,sample,elapsed_ms,interval_ms,throughput_bps";
  for (const auto& name : counter_names) out << ',' << csv_field(name);
  for (const auto& name : gauge_names) out << ',' << csv_field("gauge." + name);
  out << '\n';
  rows = for_each_row(db, query, [&](const Row& row) {
    out << fmt::format("{},{},{},{},{},{},{},{}", row.test, csv_field(row.agent), csv_field(row.stream_id),
                       csv_field(row.kind), row.sample, row.elapsed_ms, row.interval_ms,
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

void print_table(SQLite::Database& db, const SeriesQuery& query, std::ostream& out, std::uint64_t& rows) {
  rows = for_each_row(db, query, [&](const Row& row) {
    std::string changed;
    for (const auto& [name, delta] : row.deltas) {
      if (delta != 0) changed += fmt::format(" {}={}", name, delta);
    }
    out << fmt::format(
        "test {} {} {} #{} {:.1f} s {}{}\n", row.test, row.agent, row.stream_id, row.sample, row.elapsed_ms / 1e3,
        row.throughput_bps ? fmt::format("{:.0f} bit/s", *row.throughput_bps) : std::string("-"), changed);
  });
}

}  // namespace

std::uint64_t print_series(const std::string& run, const SeriesQuery& query, SeriesFormat format, std::ostream& out) {
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
    SQLite::Database db(path.string(), SQLite::OPEN_READONLY);
    db.setBusyTimeout(10'000);
    SQLite::Statement schema(db, "SELECT value FROM meta WHERE key = 'schema'");
    if (!schema.executeStep() || schema.getColumn(0).getString() != std::to_string(kSeriesSchemaVersion)) {
      throw std::runtime_error(fmt::format("not a series file of schema {}", kSeriesSchemaVersion));
    }
    switch (format) {
      case SeriesFormat::Table:
        print_table(db, query, out, rows);
        break;
      case SeriesFormat::Csv:
        print_csv(db, query, out, rows);
        break;
      case SeriesFormat::Json:
        print_json_lines(db, query, out, rows);
        break;
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", path.string(), e.what()));
  }
  return rows;
}

}  // namespace tusk
