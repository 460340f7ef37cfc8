#include "controller/series/series_outcome.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <vector>

#include "common/json_text.hpp"
#include "controller/series/series_file.hpp"
#include "controller/verdict/verdict.hpp"

namespace tusk {
namespace {

std::vector<std::string> names_in(const std::string& text) {
  std::vector<std::string> names;
  for (const auto& name : parse_json<nlohmann::json>(text)) {
    if (name.is_string()) names.push_back(name.get<std::string>());
  }
  return names;
}

// The comma-separated cumulative counters of a row, by the layout's names.
void read_counters(const std::string& text, const std::vector<std::string>& names, proto::StreamCounters& stream) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < names.size() && start <= text.size(); ++i) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    if (end > start) (*stream.mutable_counters())[names[i]] = std::stoull(text.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace

RunOutcome outcome_from_series(const std::string& path) {
  try {
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    db.setBusyTimeout(10'000);
    RunOutcome outcome;
    SQLite::Statement meta(db, "SELECT key, value FROM meta");
    std::map<std::string, std::string> values;
    while (meta.executeStep()) values[meta.getColumn(0).getString()] = meta.getColumn(1).getString();
    if (values["schema"] != std::to_string(kSeriesSchemaVersion)) {
      throw std::runtime_error(fmt::format("not a series file of schema {}", kSeriesSchemaVersion));
    }
    outcome.run_id = values["run_id"];
    std::map<std::int64_t, std::vector<std::string>> layouts;
    SQLite::Statement layout(db, "SELECT id, counter_names FROM layouts");
    while (layout.executeStep()) layouts[layout.getColumn(0).getInt64()] = names_in(layout.getColumn(1).getString());
    // Each stream's last sample: SQLite takes the bare columns of a max() aggregate from its row.
    SQLite::Statement last(db,
                           "SELECT s.test, s.agent, s.stream_id, s.kind, s.peer, max(x.sample), x.elapsed_ms, "
                           "x.layout, x.counter_values FROM samples x JOIN streams s ON s.id = x.stream "
                           "GROUP BY x.stream ORDER BY s.test, s.agent, s.stream_id");
    std::map<int, TestOutcome> tests;
    std::uint64_t streams = 0;
    while (last.executeStep()) {
      const int index = last.getColumn(0).getInt();
      TestOutcome& test = tests[index];
      test.index = index;
      test.spec.name = fmt::format("test {}", index);
      test.verdict = TestVerdict::Incomplete;
      StreamVerdict verdict;
      verdict.agent = last.getColumn(1).getString();
      verdict.stream.set_stream_id(last.getColumn(2).getString());
      verdict.stream.set_kind(last.getColumn(3).getString());
      verdict.stream.set_peer(last.getColumn(4).getString());
      const auto names = layouts.find(last.getColumn(7).getInt64());
      if (names != layouts.end()) read_counters(last.getColumn(8).getString(), names->second, verdict.stream);
      const double seconds = last.getColumn(6).getInt64() / 1e3;
      verdict.metrics = compute_metrics(verdict.stream, seconds > 0 ? seconds : 1);
      if (std::find(test.agents.begin(), test.agents.end(), verdict.agent) == test.agents.end()) {
        test.agents.push_back(verdict.agent);
        test.per_agent[verdict.agent] = AgentTestData{};
      }
      test.streams.push_back(std::move(verdict));
      ++streams;
    }
    for (auto& [index, test] : tests) outcome.tests.push_back(std::move(test));
    outcome.profile.name = "(unknown: drawn from the series file)";
    outcome.series_file = kSeriesFileName;
    outcome.exit_code = kExitAgentsMissing;
    outcome.conclusion = fmt::format(
        "incomplete: the run left no report.json; drawn from its series file ({} streams of {} tests, each up to its "
        "last sample), nothing judged",
        streams, outcome.tests.size());
    return outcome;
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace tusk
