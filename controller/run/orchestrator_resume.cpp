// A schedule that survives its controller: the ledger written as each step is judged, and a run
// started with --resume that goes on from the step after the last one the ledger holds.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "common/clock.hpp"
#include "controller/method/schedule_ledger.hpp"
#include "controller/run/orchestrator.hpp"

namespace tusk::orchestration {

void Orchestrator::write_ledger(const MethodSteps& steps, std::size_t index) {
  if (!options_.run_directory || ledger_failed_) return;
  LedgerIdentity identity;
  identity.run_id = outcome_.run_id;
  identity.started_ns = outcome_.started_ns;
  identity.profile_digest = input_digests_.first;
  identity.topology_digest = input_digests_.second;
  identity.test_index = static_cast<int>(index);
  identity.test_name = profile_.tests[index].name;
  identity.agents = agents_;
  identity.tests_before = tests_before_restart_;
  for (const TestOutcome& test : outcome_.tests) identity.tests_before.emplace_back(test.spec.name, test.verdict);
  if (series_) identity.series_file = series_->path();
  const std::vector<Fault> faults = data_.with([](RunState& s) { return s.faults; });
  const std::string directory = options_.run_directory(outcome_.run_id);
  try {
    write_schedule_ledger(directory, identity, steps.so_far(), faults, options_.topology.get());
    spdlog::info("test {} '{}': step {} kept in {}/{}", index, identity.test_name, steps.so_far().steps.size(),
                 directory, kScheduleLedgerFileName);
  } catch (const std::exception& e) {
    // The run goes on; only a restart would miss it.
    ledger_failed_ = true;
    data_.on_fault("controller", fmt::format("{}: the schedule cannot be resumed after a restart", e.what()));
  }
}

bool Orchestrator::begin_resume() {
  const ScheduleLedger& ledger = *options_.resume;
  const LedgerIdentity& id = ledger.identity;
  if (agents_ != id.agents) {
    fail_run(kExitUsage, fmt::format("--resume: run {} ran on agents {}, this one has {}: its schedule's steps pair "
                                     "agents by their place among them",
                                     id.run_id, fmt::join(id.agents, ", "), fmt::join(agents_, ", ")));
    return false;
  }
  if (id.test_index < 0 || static_cast<std::size_t>(id.test_index) >= profile_.tests.size() ||
      profile_.tests[static_cast<std::size_t>(id.test_index)].name != id.test_name) {
    fail_run(kExitUsage, fmt::format("--resume: the profile has no test {} '{}'", id.test_index, id.test_name));
    return false;
  }
  // A step the stopped controller had started may still be running on agents that registered
  // again before their lease ran out: it is stopped, as that controller would have.
  for (const AgentView& agent : registry_->agents()) {
    const proto::AgentState& state = agent.state_at_hello;
    const bool busy = state.phase() == proto::AgentState::PREPARED || state.phase() == proto::AgentState::ARMED ||
                      state.phase() == proto::AgentState::RUNNING;
    if (state.run_id() != id.run_id || !busy) continue;
    proto::Envelope stop;
    stop.mutable_stop()->set_run_id(id.run_id);
    stop.mutable_stop()->set_test_index(state.test_index());
    stop.mutable_stop()->set_reason(
        fmt::format("the controller restarted: run {} goes on as {}", id.run_id, outcome_.run_id));
    registry_->send(agent.name, stop);
    spdlog::info("--resume: {} was still in run {}'s test {}: stopped", agent.name, id.run_id, state.test_index());
  }
  tests_before_restart_ = id.tests_before;
  outcome_.resumed_from = id.run_id;
  data_.with([&](RunState& s) {
    s.faults.insert(s.faults.begin(), ledger.faults.begin(), ledger.faults.end());
    s.faults.push_back(
        {realtime_ns(), "controller", -1,
         fmt::format("the controller of run {} stopped after step {} of test '{}' (its ledger's last); this run goes "
                     "on from step {}",
                     id.run_id, ledger.steps.size(), id.test_name, ledger.steps.size() + 1)});
  });
  return true;
}

bool Orchestrator::restore_steps(MethodSteps& steps, std::size_t index) {
  ScheduleLedger& ledger = *options_.resume;
  const TestSpec test = profile_.tests[index];  // a copy: the steps are added to profile_.tests
  for (std::size_t k = 0; k < ledger.steps.size(); ++k) {
    auto planned = steps.next();
    TestOutcome& outcome = ledger.outcomes[k];
    if (!planned) {
      fail_run(kExitUsage, fmt::format("--resume: the ledger holds {} steps of '{}', its schedule has {}",
                                       ledger.steps.size(), test.name, k));
      return false;
    }
    // The first run's step numbers: those of steps the restart skipped (a method before the
    // schedule) are taken by place holders, which run nothing.
    while (static_cast<int>(profile_.tests.size()) < outcome.index) {
      data_.add_test(1);
      profile_.tests.push_back(test);
      profile_.tests.back().name = fmt::format("{} (a step before the restart)", test.name);
      profile_.tests.back().method.reset();
    }
    if (static_cast<int>(profile_.tests.size()) != outcome.index) {
      fail_run(kExitUsage, fmt::format("--resume: the ledger's step {} of '{}' was test {}, here it would be {}", k + 1,
                                       test.name, outcome.index, profile_.tests.size()));
      return false;
    }
    const auto step_index =
        static_cast<std::size_t>(data_.add_test(most_samples(planned->spec.duration, planned->spec.sample_interval)));
    if (options_.live_metrics) options_.live_metrics->add_test(planned->spec);
    profile_.tests.push_back(std::move(planned->spec));
    outcome.spec = profile_.tests[step_index];
    const std::string label = ledger.steps[k].label;
    if (!steps.restore(std::move(ledger.steps[k]), std::move(outcome))) {
      fail_run(kExitUsage, fmt::format("--resume: the ledger's step {} of '{}' is '{}', the schedule's is '{}'", k + 1,
                                       test.name, label, profile_.tests[step_index].name));
      return false;
    }
  }
  steps.restore_schedule(std::move(ledger.flows), ledger.complete);
  outcome_.steps_restored = ledger.steps.size();
  spdlog::info("test {} '{}': {} step(s) restored from run {}'s ledger; on with step {}", index, test.name,
               ledger.steps.size(), ledger.identity.run_id, ledger.steps.size() + 1);
  return true;
}

}  // namespace tusk::orchestration
