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
#include "controller/series/series_rows.hpp"
#include "controller/verdict/verdict.hpp"

namespace tusk {

RunOutcome outcome_from_series(const std::string& path) {
  try {
    SeriesFileReader reader(path);
    RunOutcome outcome;
    outcome.run_id = reader.meta("run_id");
    // Each stream's last sample (or minute): the reader gives a stream's points in time order.
    std::map<int, TestOutcome> tests;
    std::uint64_t streams = 0;
    struct Last {
      SeriesStreamInfo info;
      SeriesPoint point;
    };
    std::vector<Last> lasts;
    reader.for_each({}, SeriesResolution::Night, [&](const SeriesStreamInfo& info, const SeriesPoint& point) {
      if (lasts.empty() || lasts.back().info.id != info.id) lasts.push_back({info, {}});
      lasts.back().point = point;
      lasts.back().point.minute = nullptr;
    });
    for (const auto& [info, point] : lasts) {
      TestOutcome& test = tests[info.test];
      test.index = info.test;
      test.spec.name = fmt::format("test {}", info.test);
      test.verdict = TestVerdict::Incomplete;
      StreamVerdict stream_verdict;
      stream_verdict.agent = info.agent;
      stream_verdict.stream.set_stream_id(info.stream_id);
      stream_verdict.stream.set_kind(info.kind);
      stream_verdict.stream.set_peer(info.peer);
      for (std::size_t i = 0; i < point.names->counters.size() && i < point.counters.size(); ++i) {
        (*stream_verdict.stream.mutable_counters())[point.names->counters[i]] = point.counters[i];
      }
      const double seconds = static_cast<double>(point.elapsed_ms) / 1e3;
      stream_verdict.metrics = compute_metrics(stream_verdict.stream, seconds > 0 ? seconds : 1);
      if (std::find(test.agents.begin(), test.agents.end(), info.agent) == test.agents.end()) {
        test.agents.push_back(info.agent);
        test.per_agent[info.agent] = AgentTestData{};
      }
      test.streams.push_back(std::move(stream_verdict));
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
