// A method test's steps, one after another, and the hook commands of its test (link_failure's
// down, and up after it).
#include "controller/run/orchestrator.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <set>
#include <thread>

#include "common/clock.hpp"
#include "common/counter_names.hpp"
#include "common/heap.hpp"
#include "common/printable.hpp"
#include "common/rates.hpp"
#include "common/units.hpp"
#include "controller/engines/engine_slice.hpp"
#include "controller/method/fabric_methods.hpp"
#include "controller/method/method_steps.hpp"
#include "controller/method/step_fold.hpp"
#include "controller/metrics/live_metrics.hpp"
#include "controller/plan/planner.hpp"
#include "controller/run/agent_registry.hpp"
#include "controller/run/clock_sync.hpp"
#include "controller/run/hook_command.hpp"
#include "controller/run/progress_line.hpp"
#include "controller/run/run_data.hpp"
#include "controller/run/switch_watch.hpp"
#include "controller/run/test_judgement.hpp"
#include "controller/series/series_file.hpp"
#include "controller/switches/host_lldp.hpp"
#include "controller/switches/switch_poller.hpp"
#include "controller/verdict/unreceived_frames.hpp"

namespace tusk::orchestration {

namespace {

// The pairs of a step whose sender or receiver the step lost: they ran only part of it.
std::vector<UncoveredPair> lost_pairs(const TestOutcome& step, const std::vector<std::string>& agents,
                                      const std::vector<std::vector<std::size_t>>& peers) {
  const auto lost = [&](const std::string& name) {
    const auto found = step.per_agent.find(name);
    return found == step.per_agent.end() || found->second.lost || !found->second.result;
  };
  std::vector<UncoveredPair> pairs;
  for (std::size_t sender = 0; sender < peers.size() && sender < agents.size(); ++sender) {
    for (const std::size_t receiver : peers[sender]) {
      if (receiver >= agents.size()) continue;
      const std::string& s = agents[sender];
      const std::string& r = agents[receiver];
      if (lost(s) || lost(r)) pairs.push_back({s, r, fmt::format("{} lost during the step", lost(s) ? s : r)});
    }
  }
  return pairs;
}

}  // namespace

// A method test: its steps one after another, each an ordinary test added to the run, until the
// method has its answer. The test's outcome holds the steps and what they came to.
bool Orchestrator::run_method(std::size_t index) {
  const TestSpec spec = profile_.tests[index];
  spdlog::info("test {} '{}': method {}", index, spec.name, to_string(spec.method->kind));
  link_failure_run_.reset();
  std::optional<MethodSteps> made;
  try {
    made.emplace(spec, agents_.size(), shift_groups(spec));
  } catch (const PlanError& e) {
    fail_run(kExitUsage, e.what());
    return false;
  }
  MethodSteps& steps = *made;
  steps.set_step_fold(fold_schedule_step);
  method_under_way_ = &steps;
  method_index_ = index;
  struct Done {
    const MethodSteps*& under_way;
    ~Done() { under_way = nullptr; }
  } done{method_under_way_};
  if (options_.resume && static_cast<int>(index) == options_.resume->identity.test_index &&
      !restore_steps(steps, index)) {
    return false;
  }
  const bool schedule = spec.method->kind == MethodKind::Shift;
  // A schedule's step, once judged, goes to its ledger: a controller that stops later can resume.
  const auto record = [&](TestOutcome outcome, std::vector<UncoveredPair> not_covered) {
    steps.record(std::move(outcome), std::move(not_covered));
    // A step a signal cut short is not kept: a resumed run runs it again.
    if (schedule && !g_interrupted) write_ledger(steps, index);
  };
  bool carry_on = true;
  while (auto step = steps.next()) {
    if (g_interrupted) {
      carry_on = false;
      break;
    }
    if (step->agents > agents_.size()) {
      fail_run(kExitUsage, fmt::format("test '{}': step '{}' needs {} agents, the run has {}", spec.name,
                                       step->spec.name, step->agents, agents_.size()));
      carry_on = false;
      break;
    }
    std::vector<std::string> agents(agents_.begin(), agents_.begin() + static_cast<std::ptrdiff_t>(step->agents));
    // A schedule's step runs among the agents connected now; the pairs of those away are its
    // uncovered ones, and an agent back by a later step takes part again.
    StepCast cast;
    std::vector<UncoveredPair> not_covered;
    if (!step->peers.empty()) {
      const std::vector<bool> away = agents_away(agents);
      cast = cast_step(*step, away);
      for (const auto& [sender, receiver] : cast.left_out) {
        not_covered.push_back({agents[sender], agents[receiver],
                               fmt::format("{} not connected", agents[away[sender] ? sender : receiver])});
      }
      std::vector<std::string> present;
      for (const std::size_t a : cast.agents) present.push_back(agents[a]);
      agents = std::move(present);
    }
    const auto step_index =
        static_cast<std::size_t>(data_.add_test(most_samples(step->spec.duration, step->spec.sample_interval)));
    if (options_.live_metrics) options_.live_metrics->add_test(step->spec);
    profile_.tests.push_back(std::move(step->spec));
    if (!step->peers.empty() &&
        std::all_of(cast.peers.begin(), cast.peers.end(), [](const auto& p) { return p.empty(); })) {
      record(unrun_step(step_index, "every pair of the step had an agent away"), std::move(not_covered));
      continue;
    }
    auto plans = plans_for(step_index, spec.name, agents, step->peers.empty() ? nullptr : &cast.peers);
    if (!plans) {
      carry_on = false;
      break;
    }
    if (spec.method->kind == MethodKind::LinkFailure) {
      timed_hook_.emplace();
      timed_hook_->at = spec.method->at;
      timed_hook_->run.command = spec.method->down_command;
      timed_hook_->environment = hook_environment(spec);
    }
    // A schedule's step whose plan some agent never answered does not run; the next one may.
    const bool schedule_step = !step->peers.empty();
    auto outcome = run_test(step_index, *plans, agents, !schedule_step);
    if (timed_hook_) finish_link_failure(spec);
    if (!outcome && schedule_step && !plan_silence_.empty()) {
      const std::string why = fmt::format("no answer to the step's plan from {}", fmt::join(plan_silence_, ", "));
      for (std::size_t sender = 0; sender < cast.peers.size(); ++sender) {
        for (const std::size_t receiver : cast.peers[sender])
          not_covered.push_back({agents[sender], agents[receiver], why});
      }
      record(unrun_step(step_index, why), std::move(not_covered));
      continue;
    }
    if (!outcome) {
      carry_on = false;
      break;
    }
    if (!step->peers.empty()) {
      for (auto& pair : lost_pairs(*outcome, agents, cast.peers)) not_covered.push_back(std::move(pair));
    }
    record(std::move(*outcome), std::move(not_covered));
  }
  outcome_.tests.push_back(conclude_method(index, spec, steps));
  return carry_on && !g_interrupted;
}

// The method test as its steps came to: its result judged, its steps' problems and warnings, and
// what the steps together fall short of.
TestOutcome Orchestrator::conclude_method(std::size_t index, const TestSpec& spec, MethodSteps& steps) {
  TestOutcome test;
  test.index = static_cast<int>(index);
  test.spec = spec;
  test.agents = agents_;
  // Each step has its agents' data; the method test itself has none of its own.
  for (const auto& name : agents_) test.per_agent[name] = AgentTestData{};
  auto result = std::make_shared<MethodResult>(steps.finish());
  judge_fabric_method(*result, *spec.method, options_.topology.get(), link_failure_run_);
  if (method_localises_steps_together(result->kind)) judge_steps_together(test, *result, options_.topology.get());
  test.verdict = method_verdict(*result);
  test.agents_lost = test.verdict == TestVerdict::Incomplete && !result->steps.empty();
  for (const auto& step : result->step_outcomes) {
    for (const auto& problem : step.problems) test.problems.push_back(fmt::format("{}: {}", step.spec.name, problem));
    for (const auto& warning : step.warnings) test.warnings.push_back(fmt::format("{}: {}", step.spec.name, warning));
  }
  fold_step_evidence(test, result->step_outcomes);
  if (result->steps.empty()) test.problems.push_back("no step of the method ran");
  for (auto& line : method_problems(*result)) test.problems.push_back(std::move(line));
  for (auto& line : method_warnings(*result)) test.warnings.push_back(std::move(line));
  if (outcome_.steps_restored > 0 && options_.resume &&
      options_.resume->identity.test_index == static_cast<int>(index)) {
    const LedgerIdentity& before = options_.resume->identity;
    test.warnings.insert(
        test.warnings.begin(),
        fmt::format("steps 1-{} ran in run {} before its controller stopped and are restored from its ledger: their "
                    "samples are in {}, their agents' events, optics and switch counters in report.{}.json",
                    outcome_.steps_restored, before.run_id,
                    before.series_file.empty() ? "(no series file)" : before.series_file, before.run_id));
  }
  // What the steps together fall short of (a schedule's link coverage, a buffer under
  // min_absorbed) fails the test too.
  if (test.verdict == TestVerdict::Pass && !test.problems.empty()) test.verdict = TestVerdict::Fail;
  test.method = std::move(result);
  spdlog::info("test {} '{}': {} after {} steps", index, spec.name, to_string(test.verdict), test.method->steps.size());
  return test;
}

std::vector<bool> Orchestrator::agents_away(const std::vector<std::string>& agents) const {
  std::set<std::string> connected;
  for (const AgentLink& link : registry_->links()) {
    if (link.connected) connected.insert(link.name);
  }
  std::vector<bool> away;
  for (const auto& name : agents) away.push_back(!connected.contains(name));
  return away;
}

TestOutcome Orchestrator::unrun_step(std::size_t step_index, const std::string& why) {
  TestOutcome step;
  step.index = static_cast<int>(step_index);
  step.spec = profile_.tests[step_index];
  step.agents_lost = true;
  step.verdict = TestVerdict::Incomplete;
  step.problems.push_back(fmt::format("not run: {}", why));
  return step;
}

std::map<std::string, std::string> Orchestrator::hook_environment(const TestSpec& spec) const {
  return {{"TUSK_RUN_ID", outcome_.run_id}, {"TUSK_TEST", spec.name}, {"TUSK_LINK", spec.method->link}};
}

// link_failure's down command, started by follow_test when it is due: waited for a little after
// the test (then killed), and the up command run to bring the link back.
void Orchestrator::finish_link_failure(const TestSpec& spec) {
  HookRun run = timed_hook_->run;
  if (timed_hook_->running) {
    run.exit_status = timed_hook_->running->wait(kHookGrace);
    spdlog::info("test '{}': down command ended: {}", spec.name,
                 run.exit_status ? fmt::format("exit {}", *run.exit_status) : "killed: still running");
  }
  timed_hook_.reset();
  link_failure_run_ = run;
  if (spec.method->up_command.empty()) return;
  try {
    HookCommand up(spec.method->up_command, hook_environment(spec));
    const auto status = up.wait(kHookGrace);
    if (status != 0) {
      data_.on_fault("controller", fmt::format("test '{}': the up command {} ({}): {} may still be down", spec.name,
                                               status ? fmt::format("exited {}", *status) : "did not end in time",
                                               spec.method->up_command, spec.method->link));
    }
  } catch (const std::system_error& e) {
    data_.on_fault("controller", fmt::format("test '{}': {}", spec.name, e.what()));
  }
}

// Starts the timed hook of the running test when it is due; polls it after.
void Orchestrator::drive_timed_hook(std::int64_t planned_start, std::int64_t now) {
  if (!timed_hook_) return;
  if (timed_hook_->running) {
    timed_hook_->running->poll();
    return;
  }
  if (now < planned_start + to_ns(timed_hook_->at)) return;
  timed_hook_->run.ran_at_s = static_cast<double>(now - planned_start) / 1e9;
  spdlog::info("running the down command at +{:.3f} s: {}", *timed_hook_->run.ran_at_s, timed_hook_->run.command);
  try {
    timed_hook_->running = std::make_unique<HookCommand>(timed_hook_->run.command, timed_hook_->environment);
  } catch (const std::system_error& e) {
    timed_hook_->run.ran_at_s.reset();
    data_.on_fault("controller", e.what());
    timed_hook_->failed = true;
  }
}

std::optional<std::int64_t> Orchestrator::timed_hook_due(std::int64_t planned_start) const {
  if (!timed_hook_ || timed_hook_->running || timed_hook_->failed) return std::nullopt;
  return planned_start + to_ns(timed_hook_->at);
}

// The run's agents by group, for a shift schedule counted in groups: the leaf each agent's
// data-plane address hangs off in the topology file, or the profile's own list.
ShiftGroups Orchestrator::shift_groups(const TestSpec& spec) const {
  if (!spec.shift || spec.shift->group_by == ShiftSpec::GroupBy::None) return {};
  if (spec.shift->group_by == ShiftSpec::GroupBy::Listed) return listed_groups(*spec.shift, agents_);
  const FabricTopology* topology = options_.topology.get();
  if (!topology) {
    throw PlanError(
        fmt::format("test '{}': group_by: leaf reads which leaf each host hangs off from the topology "
                    "file: run with --topology FILE",
                    spec.name));
  }
  std::map<std::string, std::string> address_of;
  for (const auto& name : agents_) address_of[name] = own_data_plane_address(spec.engine, inventory_by_name_.at(name));
  return group_agents(
      agents_, [&](const std::string& agent) { return topology->attached_to(address_of[agent]); },
      fmt::format("test '{}': group_by: leaf: {} places no cable at these agents' data-plane addresses", spec.name,
                  topology->file()));
}

}  // namespace tusk::orchestration
