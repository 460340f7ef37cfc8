#include "controller/run/test_judgement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/counter_names.hpp"
#include "controller/engines/engine_slice.hpp"
#include "controller/method/method_result.hpp"
#include "controller/outcome/stream_windows.hpp"
#include "controller/run/run_data.hpp"
#include "controller/verdict/flow_table.hpp"
#include "controller/verdict/stream_values.hpp"
#include "controller/verdict/unreceived_frames.hpp"

namespace tusk {

namespace {

// When each agent started on the controller's clock, against the planned start; the start times of
// those that said.
std::vector<std::int64_t> account_starts(TestOutcome& test) {
  std::vector<std::int64_t> actual_starts;
  for (const auto& name : test.agents) {
    const AgentTestData& agent = test.per_agent[name];
    AgentStart start;
    start.agent = name;
    start.clock_offset_ns = agent.clock ? agent.clock->offset_ns : 0;
    start.clock_rtt_ns = agent.clock ? agent.clock->rtt_ns : 0;
    if (agent.result && agent.result->actual_start_agent_ns() != 0) {
      const std::int64_t on_our_clock = agent.result->actual_start_agent_ns() - start.clock_offset_ns;
      start.start_error_ns = on_our_clock - test.planned_start_ns;
      actual_starts.push_back(on_our_clock);
    }
    test.starts.push_back(start);
  }
  return actual_starts;
}

// One agent's plan refusal, early stop and missing samples as the test's problems; false when it
// sent no result (its line goes to `lost`).
bool account_agent(TestOutcome& test, const std::string& name, std::vector<std::string>& lost) {
  const AgentTestData& agent = test.per_agent[name];
  if (agent.plan_ack && !agent.plan_ack->ok()) {
    test.problems.push_back(fmt::format("{}: plan refused: {}", name, agent.plan_ack->error()));
  }
  if (!agent.result) {
    lost.push_back(fmt::format("{}: no result{}", name, agent.lost ? " (agent lost)" : ""));
    return false;
  }
  if (agent.lost) lost.push_back(fmt::format("{}: lost during the test", name));
  const auto& result = *agent.result;
  if (!result.completed()) test.problems.push_back(fmt::format("{}: stopped early: {}", name, result.stop_reason()));
  const std::uint32_t most = most_samples(test.spec.duration, test.spec.sample_interval);
  const SampleAccount samples = account_samples(agent, result.samples(), most);
  if (samples.claim_beyond_test) {
    test.problems.push_back(
        fmt::format("{}: claims {} samples, more than the test's {}", name, result.samples(), most));
  }
  if (samples.missing_count > 0) {
    test.problems.push_back(fmt::format(
        "{}: samples missing: {}{}", name, fmt::join(samples.missing, ","),
        samples.missing_count > samples.missing.size() ? fmt::format(" ({} in all)", samples.missing_count) : ""));
  }
  return true;
}

// A stream whose peer the test lost (killed, its host down) failed on what that peer stopped
// sending or receiving: its failed checks say so, and its flow votes for no link.
void excuse_streams_of_lost_peers(TestOutcome& test) {
  std::set<std::string> lost;
  for (const auto& name : test.agents) {
    const AgentTestData& agent = test.per_agent[name];
    if (agent.lost || !agent.result) lost.insert(name);
  }
  if (lost.empty()) return;
  for (StreamVerdict& verdict : test.streams) {
    if (!lost.contains(verdict.stream.peer())) continue;
    for (ThresholdCheck& check : verdict.checks) {
      if (check.passed || check.not_the_link != ThresholdCheck::NotTheLink::No) continue;
      check.not_the_link = ThresholdCheck::NotTheLink::PeerLost;
      check.caveat = fmt::format(
          "{}; its peer {} was lost during the test: what that peer stopped sending or "
          "receiving is no verdict on the link",
          check.describe(), verdict.stream.peer());
    }
  }
}

// A sender that fell behind its pace by more than 1 % of its frames (its thread descheduled on a
// busy host, a port that refused frames) offered less than the test asked: a warning each, so a
// throughput short of the rate reads as the tester's, not the link's.
void warn_of_senders_behind(TestOutcome& test) {
  for (const StreamVerdict& verdict : test.streams) {
    const auto skipped = counter_of(verdict.stream, counters::kTxSkippedFrames);
    const auto sent = counter_of(verdict.stream, counters::kTxFrames);
    if (!skipped || *skipped == 0 || !sent) continue;
    // Summed as doubles: two counters from the agent could wrap a 64-bit sum to a tiny total.
    const double share = static_cast<double>(*skipped) / (static_cast<double>(*sent) + static_cast<double>(*skipped));
    if (share <= 0.01) continue;
    test.warnings.push_back(
        fmt::format("{} {}: the sender fell behind its pace and let {} frame slots pass ({:.2g}% of what it owed): its "
                    "throughput is short of the rate by the tester's doing, not the link's (give its TX thread a core)",
                    verdict.agent, verdict.stream.stream_id(), *skipped, share * 100));
  }
}

// The flows' path faults, suspects and link coverage, judged against min_link_coverage: the flows
// of the test's streams, or of `flows` gathered already (a schedule's, step by step).
void localise_and_cover(TestOutcome& test, const FabricTopology* topology,
                        std::shared_ptr<const FlowTable> flows = nullptr) {
  // A schedule's path faults are its steps', found among each step's streams as it ended.
  if (!flows) test.path_faults = path_fault_signs(test.streams);
  const bool switches_read = topology && (!test.switches_before.empty() || !test.switches_after.empty());
  if (switches_read) {
    test.switch_counters = count_switch_links(*topology, test.switches_before, test.switches_after);
    for (const auto& unreadable : test.switch_counters.unreadable) {
      test.warnings.push_back(fmt::format("{}: its counters are not in this test's evidence", unreadable));
    }
  }
  const SwitchCounterEvidence* counters = switches_read ? &test.switch_counters : nullptr;
  if (flows) {
    test.localisation = localise(std::move(flows), topology, counters, test.spec.localisation.min_rate);
  } else {
    // A plain test is also localised window by window, over its streams' series bins: when a
    // stream failed (a clean test names nothing, and a checkpoint need not copy every stream's bins).
    const bool any_failed = std::any_of(test.streams.begin(), test.streams.end(),
                                        [](const StreamVerdict& verdict) { return !verdict.passed(); });
    const FlowWindows windows = any_failed ? stream_windows(test) : FlowWindows{};
    test.localisation = localise(test.streams, topology, counters, test.spec.localisation.min_rate,
                                 windows.size() > 0 ? &windows : nullptr);
  }
  test.coverage = link_coverage(test.localisation, topology);
  if (test.spec.min_link_coverage) {
    if (auto problem = coverage_problem(test.coverage, *test.spec.min_link_coverage)) {
      test.problems.push_back(std::move(*problem));
    }
  }
}

// Each agent's ports' optics against the profile's thresholds: a failing finding is a problem of
// the test, a warning a warning.
void judge_optics_of(TestOutcome& test, const std::string& name, const proto::TestResult& result,
                     const FabricTopology* topology) {
  if (result.optics_size() == 0) return;
  const OpticsThresholds thresholds = optics_thresholds(test.spec.optics);
  if (static_cast<std::size_t>(result.optics_size()) > kMaxOpticsPortsPerAgent) {
    test.problems.push_back(fmt::format("{}: reported the optics of {} ports, more than the {} judged", name,
                                        result.optics_size(), kMaxOpticsPortsPerAgent));
  }
  const auto ports = std::min<std::size_t>(result.optics_size(), kMaxOpticsPortsPerAgent);
  for (std::size_t i = 0; i < ports; ++i) {
    PortOpticsOutcome port = judge_port_optics(name, result.optics(static_cast<int>(i)), thresholds);
    if (topology) place_port_optics(port, *topology);
    for (const OpticsFinding& finding : port.verdict.findings) {
      auto& list = finding.severity == OpticsSeverity::failure ? test.problems : test.warnings;
      list.push_back(fmt::format("{}: optics: {}", port_optics_title(port), finding.text));
    }
    test.optics.push_back(std::move(port));
  }
}

// Each of the agent's ports read every interval: its timeline on the controller's clock, and a
// failure (or a warning) the whole test's reading of the port did not already give: a burst its
// average hid.
void judge_optics_timeline_of(TestOutcome& test, const std::string& name) {
  AgentTestData& data = test.per_agent[name];
  const std::int64_t offset_ns = data.clock ? data.clock->offset_ns : 0;
  for (auto& [port, agent_timeline] : data.optics_timeline) {
    OpticsTimeline timeline = std::move(agent_timeline);
    if (timeline.with_findings > 0) {
      timeline.first_start_ns -= offset_ns;
      timeline.first_end_ns -= offset_ns;
      timeline.last_end_ns -= offset_ns;
    }
    if (timeline.failed()) {
      timeline.failing_start_ns -= offset_ns;
      timeline.failing_end_ns -= offset_ns;
    }
    bool whole_failed = false, whole_findings = false;
    for (const auto& whole : test.optics) {
      if (whole.agent != name || whole.port != timeline.port) continue;
      whole_failed = whole.verdict.failed();
      whole_findings = !whole.verdict.findings.empty();
    }
    if (timeline.failed() && !whole_failed) {
      test.problems.push_back(fmt::format("optics per interval: {}", optics_timeline_text(timeline)));
    } else if (timeline.with_findings > 0 && !timeline.failed() && !whole_findings) {
      test.warnings.push_back(fmt::format("optics per interval: {}", optics_timeline_text(timeline)));
    }
    test.optics_timeline.push_back(std::move(timeline));
  }
  data.optics_timeline.clear();
}

// The streams far from their siblings: a warning each, or with `outliers: fail` a problem each,
// the first kMaxOutlierLines by name and the rest counted.
void judge_outliers(TestOutcome& test) {
  if (test.spec.outliers == OutlierMode::Off) return;
  test.outliers = find_stream_outliers(test.streams, test.spec.outlier_k);
  auto& lines = test.spec.outliers == OutlierMode::Fail ? test.problems : test.warnings;
  for (std::size_t i = 0; i < std::min(test.outliers.size(), kMaxOutlierLines); ++i) {
    lines.push_back(outlier_text(test.outliers[i], test.streams, test.spec.outlier_k));
  }
  if (test.outliers.size() > kMaxOutlierLines) {
    lines.push_back(fmt::format("outliers: {} more beyond k {:g} (report.json tests[].outliers)",
                                test.outliers.size() - kMaxOutlierLines, test.spec.outlier_k));
  }
}

}  // namespace

void judge_steps_together(TestOutcome& test, MethodResult& steps, const FabricTopology* topology) {
  test.streams.clear();
  std::size_t total = 0;
  for (const auto& step : steps.step_outcomes) total += step.streams.size();
  test.streams.reserve(total);  // millions of verdicts: growing by doubling would hold two copies
  test.outliers.clear();
  test.path_faults.clear();
  for (std::size_t i = 0; i < steps.step_outcomes.size(); ++i) {
    TestOutcome& step = steps.step_outcomes[i];
    // The step's outliers were judged among its own streams (a step is a class of its own): they
    // move with them, their indices now into the test's streams.
    for (StreamOutlier& outlier : step.outliers) {
      outlier.stream += test.streams.size();
      test.outliers.push_back(std::move(outlier));
    }
    step.outliers.clear();
    // With no flow table (a method's own outcomes) the path faults are found again from the
    // streams below; a schedule's steps found theirs as they were folded.
    for (PathFaultSign& sign : step.path_faults) {
      if (!steps.schedule_flows) break;
      for (std::size_t& s : sign.failing) s += test.streams.size();
      for (std::size_t& s : sign.passing) s += test.streams.size();
      test.path_faults.push_back(std::move(sign));
    }
    for (auto& verdict : step.streams) {
      test.streams.push_back(std::move(verdict));
      test.streams.back().step = static_cast<std::uint32_t>(i + 1);
    }
    // What indexed the step's own streams goes with them: the test's localisation supersedes it.
    // The emptied vector's storage goes too, step by step, not after the last.
    std::vector<StreamVerdict>().swap(step.streams);
    step.localisation = {};
    step.path_faults.clear();
    step.coverage.reset();
  }
  std::stable_sort(test.outliers.begin(), test.outliers.end(),
                   [](const StreamOutlier& a, const StreamOutlier& b) { return a.deviations > b.deviations; });
  // The switches counted the whole schedule between the first step's start and the last's end.
  if (!steps.step_outcomes.empty()) {
    test.switches_before = steps.step_outcomes.front().switches_before;
    test.switches_after = steps.step_outcomes.back().switches_after;
  }
  // Each step's flows joined the schedule's table as the step ended (fold_schedule_step); steps
  // recorded without one (a method's own outcomes) are read from their streams.
  localise_and_cover(test, topology, steps.schedule_flows);
}

void fold_step_evidence(TestOutcome& test, std::vector<TestOutcome>& steps) {
  std::map<std::pair<std::string, std::string>, std::size_t> index;           // (agent, port) -> test.optics
  std::map<std::pair<std::string, std::string>, std::size_t> timeline_index;  // -> test.optics_timeline
  for (auto& step : steps) {
    for (auto& port : step.optics) {
      const auto [known, added] = index.try_emplace({port.agent, port.port}, test.optics.size());
      if (added) {
        test.optics.push_back(std::move(port));
      } else if (PortOpticsOutcome& same = test.optics[known->second];
                 port.verdict.failed() || !same.verdict.failed()) {
        same = std::move(port);
      }
    }
    for (auto& timeline : step.optics_timeline) {
      const auto [known, added] =
          timeline_index.try_emplace({timeline.agent, timeline.port}, test.optics_timeline.size());
      if (added) {
        test.optics_timeline.push_back(std::move(timeline));
      } else {
        merge_optics_timeline(test.optics_timeline[known->second], timeline);
      }
    }
    std::vector<OpticsTimeline>().swap(step.optics_timeline);
    std::vector<PortOpticsOutcome>().swap(step.optics);
    std::vector<SwitchReading>().swap(step.switches_before);
    std::vector<SwitchReading>().swap(step.switches_after);
    for (auto& interval : step.switch_intervals) test.switch_intervals.push_back(std::move(interval));
    std::vector<SwitchInterval>().swap(step.switch_intervals);
  }
  test.link_evidence = link_evidence_rows(test.localisation, test.switch_counters, test.optics);
}

void judge_test(TestOutcome& test, const FabricTopology* topology) {
  const TestSpec& spec = test.spec;
  const std::vector<std::int64_t> actual_starts = account_starts(test);
  std::vector<AgentStream> streams;
  std::set<std::string> reporting;
  std::vector<std::string> lost_agents;
  for (const auto& name : test.agents) {
    if (!account_agent(test, name, lost_agents)) {
      judge_optics_timeline_of(test, name);  // what an agent lost mid-test read until then
      continue;
    }
    reporting.insert(name);
    judge_optics_of(test, name, *test.per_agent[name].result, topology);
    // Judged into test.optics: the raw readings would be a second copy a port, kept by every step of
    // a method until the run ends.
    test.per_agent[name].result->clear_optics();
    judge_optics_timeline_of(test, name);
    // Moved, not copied: a stream's counters live on in its verdict alone (a copy in the result
    // and another here was the peak of judging a test of thousands of streams).
    auto& results = *test.per_agent[name].result->mutable_streams();
    for (auto& stream : results) streams.push_back({name, std::move(stream)});
    google::protobuf::RepeatedPtrField<proto::StreamCounters>().Swap(&results);  // Clear() keeps the emptied messages
  }
  for (auto& problem : account_unreceived_frames(streams, reporting)) test.problems.push_back(std::move(problem));
  for (auto& [name, stream] : streams) {
    const auto& result = *test.per_agent[name].result;
    const double duration_s = result.actual_stop_agent_ns() > result.actual_start_agent_ns()
                                  ? (result.actual_stop_agent_ns() - result.actual_start_agent_ns()) / 1e9
                                  : spec.duration.count() / 1e3;
    test.streams.push_back(judge_stream(spec, name, std::move(stream), duration_s));
    // The stream's windows, its last one closed now that the test is over.
    auto& series = test.per_agent[name].series;
    if (const auto found = series.find(test.streams.back().stream.stream_id());
        found != series.end() && found->second.windows.active()) {
      found->second.windows.close();
      judge_windows(test.streams.back(), found->second.windows);
    }
  }
  excuse_streams_of_lost_peers(test);
  warn_of_senders_behind(test);
  localise_and_cover(test, topology);
  test.link_evidence = link_evidence_rows(test.localisation, test.switch_counters, test.optics);
  judge_outliers(test);
  for (auto& problem : unjudged_thresholds(spec, test.streams)) test.problems.push_back(std::move(problem));
  // Lost agents fail the test (exit 3) unless the profile allows that many (max_agents_lost);
  // then the rest are judged and the losses are warnings.
  const bool too_many_lost = static_cast<double>(lost_agents.size()) > agents_lost_allowed(spec);
  if (too_many_lost) test.agents_lost = true;
  for (auto& line : lost_agents) (too_many_lost ? test.problems : test.warnings).push_back(std::move(line));
  for (auto& line : unmeasured_defaults(spec, test.streams)) test.warnings.push_back(std::move(line));
  if (const EngineSlice* engine = find_engine(spec.engine); engine && engine->conclude) {
    test.engine_result = engine->conclude(test);
  }
  if (!actual_starts.empty()) {
    auto [low, high] = std::minmax_element(actual_starts.begin(), actual_starts.end());
    test.start_skew_ns = *high - *low;
  }
  const bool streams_pass =
      std::all_of(test.streams.begin(), test.streams.end(), [](const StreamVerdict& v) { return v.passed(); });
  if (test.agents_lost) {
    test.verdict = TestVerdict::Incomplete;
  } else {
    test.verdict = streams_pass && test.problems.empty() ? TestVerdict::Pass : TestVerdict::Fail;
  }
}

}  // namespace tusk
