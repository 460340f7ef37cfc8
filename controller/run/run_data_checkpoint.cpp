// A running test's data as a checkpoint reads it: copied as the checkpoint judges it, without the
// streams' bins, which it reads one stream at a time as report.json is written. A copy of every
// stream (4 KiB of bins each) while the report was judged and written held the checkpoint's peak
// at 1.5 x the controller's steady memory.
#include <algorithm>
#include <utility>

#include "controller/run/run_data.hpp"

namespace tusk {

namespace {

// An agent's data with only its windowed streams, as judged, and their widest bins in `widest`.
AgentTestData copy_to_judge(AgentTestData& live, std::uint32_t& widest) {
  AgentTestData copy;
  {
    // All but the streams copied as a whole: the map steps aside for the copy and comes back
    // however the copy ends (the caller holds the lock).
    struct PutBack {
      AgentTestData& live;
      std::map<std::string, StreamSeries> series;
      ~PutBack() { live.series = std::move(series); }
    } aside{live, std::move(live.series)};
    copy = live;
  }
  for (const auto& [id, series] : live.series) {
    widest = std::max(widest, series.width());
    if (series.windows.active()) copy.series.emplace(id, series.for_judging());
  }
  return copy;
}

// What an agent that sent no result yet would say now: its streams' latest values, not completed.
proto::TestResult result_so_far(const AgentTestData& live, const std::string& run_id, int test_index) {
  proto::TestResult result;
  result.set_run_id(run_id);
  result.set_test_index(test_index);
  result.set_completed(false);
  result.set_stop_reason("still running at the checkpoint");
  result.set_samples(live.samples.highest());
  std::uint64_t elapsed_ms = 0;
  for (const auto& [id, series] : live.series) {
    *result.add_streams() = series.latest_named();
    elapsed_ms = std::max(elapsed_ms, series.latest_elapsed_ms());
  }
  result.set_actual_start_agent_ns(live.planned_start_agent_ns);
  result.set_actual_stop_agent_ns(live.planned_start_agent_ns + static_cast<std::int64_t>(elapsed_ms) * 1'000'000);
  return result;
}

}  // namespace

RunData::TestSoFar RunData::test_so_far(int test_index, const std::vector<std::string>& agents) {
  TestSoFar so_far;
  std::lock_guard lock(mutex_);
  for (const auto& name : agents) {
    AgentTestData& copy = so_far.per_agent[name];
    const auto found = state_.tests.find({test_index, name});
    if (found == state_.tests.end()) continue;
    AgentTestData& live = found->second;
    copy = copy_to_judge(live, so_far.widest_bins);
    if (!copy.result && !live.samples.empty()) copy.result = result_so_far(live, state_.run_id, test_index);
  }
  return so_far;
}

std::optional<StreamSeries> RunData::stream_now(int test_index, const std::string& agent,
                                                const std::string& stream_id) {
  std::lock_guard lock(mutex_);
  const auto data = state_.tests.find({test_index, agent});
  if (data == state_.tests.end()) return std::nullopt;
  const auto found = data->second.series.find(stream_id);
  if (found == data->second.series.end()) return std::nullopt;
  return found->second;
}

}  // namespace tusk
