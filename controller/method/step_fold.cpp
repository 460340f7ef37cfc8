#include "controller/method/step_fold.hpp"

#include <memory>
#include <utility>
#include <vector>

namespace tusk {

void fold_schedule_step(TestOutcome& outcome, std::uint32_t step, MethodResult& result) {
  std::size_t kept_before = 0;
  for (const TestOutcome& earlier : result.step_outcomes) kept_before += earlier.streams.size();
  if (!result.schedule_flows) result.schedule_flows = std::make_shared<FlowTable>();
  std::vector<StreamVerdict>& streams = outcome.streams;
  std::vector<bool> keep(streams.size(), false);
  for (std::size_t s = 0; s < streams.size(); ++s) keep[s] = !streams[s].passed();
  for (const StreamOutlier& outlier : outcome.outliers) keep.at(outlier.stream) = true;
  const FlowTable* flows = outcome.localisation.flows.get();
  if (flows) {
    for (std::size_t f = 0; f < flows->size(); ++f) {
      const FlowRecord& flow = (*flows)[f];
      if (flow.clean()) continue;  // summed: its streams go
      for (const std::uint32_t s : {flow.rx_stream, flow.tx_stream}) {
        if (s != kNoStream) keep.at(s) = true;
      }
    }
  }
  std::vector<std::uint32_t> index(streams.size(), kNoStream);  // into the schedule's streams
  std::vector<StreamVerdict> kept;
  for (std::size_t s = 0; s < streams.size(); ++s) {
    if (!keep[s]) continue;
    index[s] = static_cast<std::uint32_t>(kept_before + kept.size());
    kept.push_back(std::move(streams[s]));
    kept.back().step = step;
  }
  for (StreamOutlier& outlier : outcome.outliers) outlier.stream = index[outlier.stream] - kept_before;
  // A path fault's failing streams are kept; its passing siblings are counted.
  for (PathFaultSign& sign : outcome.path_faults) {
    for (std::size_t& s : sign.failing) s = index[s] - kept_before;
    sign.passing_not_kept += sign.passing.size();
    sign.passing.clear();
  }
  if (flows) result.schedule_flows->append(*flows, step, index, /*sum_clean=*/true);
  // What indexed the step's own flows goes: the schedule's localisation supersedes it.
  outcome.localisation = {};
  outcome.coverage.reset();
  streams = std::move(kept);
}

}  // namespace tusk
