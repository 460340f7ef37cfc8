#include "controller/run/run_orchestrator.hpp"

#include <fmt/format.h>
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

#include "controller/run/orchestrator.hpp"

namespace tusk {
namespace orchestration {

std::atomic<bool> g_interrupted{false};
// The first interruption's signal and time (clock_gettime is async-signal-safe).
std::atomic<int> g_interrupt_signal{0};
std::atomic<std::int64_t> g_interrupt_ns{0};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<std::int64_t>::is_always_lock_free);

namespace {

extern "C" void on_interrupt(int signal) {
  int none = 0;
  if (g_interrupt_signal.compare_exchange_strong(none, signal)) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    g_interrupt_ns = std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
  }
  g_interrupted = true;
}

}  // namespace

Orchestrator::Orchestrator(const Profile& profile, const RunOptions& options)
    : profile_(profile),
      options_(options),
      data_(make_run_id(), most_samples_of(profile)),
      progress_(options.progress_line) {
  outcome_.run_id = data_.with([](RunState& s) { return s.run_id; });
  outcome_.profile = profile;
  outcome_.retest_of = options_.retest_of;
}

RunOutcome Orchestrator::run() {
  outcome_.started_ns = realtime_ns();
  input_digests_ = {file_digest(profile_.file), options_.topology ? file_digest(options_.topology->file()) : 0};
  open_series_file();
  start_control_plane();
  write_start_checkpoint();
  g_interrupted = false;
  g_interrupt_signal = 0;
  auto previous_int = std::signal(SIGINT, on_interrupt);
  auto previous_term = std::signal(SIGTERM, on_interrupt);
  run_tests();
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
  progress_.finish();
  close_series_file();
  if (g_interrupted) conclude_interrupted();
  outcome_.agents = registry_->agents();
  outcome_.faults = data_.with([](RunState& s) { return s.faults; });
  outcome_.finished_ns = realtime_ns();
  conclude();
  // Moved, not copied: a copy held every finished test's series twice as the run ended (the
  // controller's peak, 31 MiB of bins at 4,032 streams). The orchestrator is done with it.
  return std::move(outcome_);
}

// RUN_DIR/series.sqlite, when the options name a run directory. A run that cannot write it still
// runs, and says so.
void Orchestrator::open_series_file() {
  if (!options_.run_directory) return;
  const std::string directory = options_.run_directory(outcome_.run_id);
  try {
    std::error_code error;
    std::filesystem::create_directories(directory, error);
    series_.emplace((std::filesystem::path(directory) / kSeriesFileName).string(), outcome_.run_id, SeriesQueueLimits{},
                    series_retention_of(profile_));
    data_.write_series_to(&*series_);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    data_.with([&](RunState& s) { s.faults.push_back({realtime_ns(), "", -1, e.what()}); });
  }
}

// Commits what is queued; the file stays open for records that still come.
void Orchestrator::close_series_file() {
  if (!series_) return;
  series_->flush();
  outcome_.series_file = series_->path();
  if (const auto problem = series_->problem()) {
    spdlog::error("{}", *problem);
    data_.with([&](RunState& s) { s.faults.push_back({realtime_ns(), "", -1, *problem}); });
  }
}

void Orchestrator::start_control_plane() {
  AgentRegistry::Listener listener;
  listener.on_record = [this](const std::string& agent, proto::Record& record) {
    // The metrics take only what the run kept: the plan's cut, the pace and every bound applied.
    const auto kept = data_.on_record(agent, std::move(record), options_.live_metrics != nullptr);
    if (options_.live_metrics && kept) options_.live_metrics->on_record(agent, *kept);
  };
  listener.on_plan_ack = [this](const std::string& agent, const proto::PlanAck& ack) { data_.on_plan_ack(agent, ack); };
  listener.on_fault = [this](const std::string& agent, const std::string& what) { data_.on_fault(agent, what); };
  control_plane_.emplace(options_.control, std::move(listener));
  registry_ = &control_plane_->registry();
  if (options_.live_metrics) {
    live_metrics_ = options_.live_metrics->attach(outcome_.run_id, [this] { return registry_->links(); });
  }
}

void Orchestrator::run_tests() {
  if (!wait_for_agents()) return;
  std::vector<proto::Inventory> inventories;
  for (const auto& name : agents_) {
    inventories.push_back(registry_->agent(name)->inventory);
    inventory_by_name_[name] = inventories.back();
  }
  if (auto problems = missing_engines(profile_, inventories, agents_); !problems.empty()) {
    fail_run(kExitUsage, fmt::format("agents cannot run this profile: {}", fmt::join(problems, "; ")));
    return;
  }
  if (!check_cabling_first()) return;
  if (options_.resume && !begin_resume()) return;
  const std::size_t declared = profile_.tests.size();
  for (std::size_t i = 0; i < declared; ++i) {
    if (g_interrupted) return;
    if (options_.resume && static_cast<int>(i) < options_.resume->identity.test_index) {
      spdlog::info("test {} '{}': ran before the restart (run {})", i, profile_.tests[i].name, outcome_.resumed_from);
      continue;
    }
    phase_ = fmt::format("before test {} '{}'", i, profile_.tests[i].name);
    if (profile_.tests[i].method) {
      if (!run_method(i)) return;
      continue;
    }
    auto plans = plans_for(i, profile_.tests[i].name, agents_);
    if (!plans) return;
    auto test = run_test(i, *plans, agents_);
    if (!test) return;
    outcome_.tests.push_back(std::move(*test));
    if (g_interrupted) return;
  }
}

// One test on `agents`; nothing when it could not start (the run has failed).
std::optional<TestOutcome> Orchestrator::run_test(std::size_t test_index, const std::vector<AgentPlan>& plans,
                                                  const std::vector<std::string>& agents, bool silence_ends_run) {
  test_agents_ = agents;
  const int index = static_cast<int>(test_index);
  const TestSpec& spec = profile_.tests[test_index];
  data_.with([&](RunState& s) { s.current_test = index; });
  if (options_.live_metrics) options_.live_metrics->test_started(index);
  spdlog::info("test {} '{}': {} engine, {} on {} agents", index, spec.name, spec.engine,
               units::format_duration(spec.duration), test_agents_.size());
  phase_ = fmt::format("during test {} '{}'", index, spec.name);

  auto switches_before = read_switches_now(index, "before");
  std::optional<SwitchWatch> watch;
  if (options_.topology && !options_.switches.empty() && options_.switch_interval.count() > 0) {
    watch.emplace(options_.switches, *options_.topology, options_.switch_interval, switches_before, realtime_ns());
  }
  const auto clocks = sync_clocks();
  // Receivers take the clock offsets out of one-way latency.
  std::map<std::string, std::int64_t> offsets;
  for (const auto& [name, clock] : clocks) offsets[name] = clock.offset_ns;
  // Agents that report one hostname share one clock: their offsets are left out, as estimating
  // zero adds only error. This stays on the agents' word, unlike the node actions name
  // (agent_identity.hpp): two agents of one host whose certificates name only themselves are one
  // clock, and a hostile agent gains nothing by the claim, as its own timestamps are its word anyway.
  std::map<std::string, std::string> hosts;
  for (const auto& [name, inventory] : inventory_by_name_) hosts[name] = inventory.hostname();
  std::vector<AgentPlan> timed_plans = plans;
  set_peer_clock_offsets(timed_plans, offsets, hosts);
  if (!hand_out_plans(timed_plans, index, silence_ends_run)) return std::nullopt;

  // Far enough ahead that every StartAt arrives first, even on a slow or large fabric.
  std::int64_t max_rtt = 0;
  for (const auto& [name, clock] : clocks) max_rtt = std::max(max_rtt, clock.rtt_ns);
  const std::int64_t margin = start_margin_ns(max_rtt, test_agents_.size());
  const std::int64_t planned_start = realtime_ns() + margin;
  data_.pace(index, planned_start, spec.sample_interval);
  for (const auto& plan : timed_plans) {
    const auto clock = clocks.count(plan.agent) ? clocks.at(plan.agent) : ClockSample{};
    proto::Envelope start;
    start.mutable_start_at()->set_run_id(outcome_.run_id);
    start.mutable_start_at()->set_test_index(index);
    start.mutable_start_at()->set_agent_start_ns(planned_start + clock.offset_ns);
    data_.with([&](RunState& s) {
      auto& agent = s.tests[{index, plan.agent}];
      agent.clock = clock;
      agent.planned_start_agent_ns = planned_start + clock.offset_ns;
    });
    registry_->set_standing_orders(plan.agent, {envelope_of(plan.plan), start});
  }

  follow_test(index, spec, planned_start, timed_plans);
  stop_all(index, "test over");
  if (watch) watch->stop();
  if (!options_.switches.empty()) std::this_thread::sleep_for(options_.switch_settle);
  auto switches_after = read_switches_now(index, "after");
  std::vector<SwitchInterval> intervals;
  if (watch) intervals = watch->finish(switches_after, realtime_ns());
  return collect(index, spec, planned_start, timed_plans,
                 {std::move(switches_before), std::move(switches_after), std::move(intervals)});
}

void Orchestrator::fail_run(int exit_code, const std::string& why) {
  spdlog::error("{}", why);
  if (outcome_.conclusion.empty()) {
    outcome_.exit_code = exit_code;
    outcome_.conclusion = why;
  }
}

// An interrupted run says so, whatever else it came to: by which signal, when, and where it was.
void Orchestrator::conclude_interrupted() {
  const int signal = g_interrupt_signal.load();
  const std::int64_t at = g_interrupt_ns.load();
  const std::string why = fmt::format(
      "interrupted by {} {} into the run, {}",
      signal == SIGTERM  ? "SIGTERM"
      : signal == SIGINT ? "SIGINT"
                         : "a signal",
      units::format_duration(std::chrono::nanoseconds(std::max<std::int64_t>(at - outcome_.started_ns, 0))), phase_);
  spdlog::error("{}", why);
  outcome_.exit_code = kExitInterruptedBase + (signal != 0 ? signal : SIGINT);
  outcome_.conclusion = why;
  outcome_.interrupted_ns = at;
}

void Orchestrator::conclude() {
  if (!outcome_.conclusion.empty()) return;  // fail_run already decided
  bool lost =
      std::any_of(outcome_.tests.begin(), outcome_.tests.end(), [](const TestOutcome& t) { return t.agents_lost; });
  std::size_t failed = 0;
  for (const auto& test : outcome_.tests) failed += test.verdict != TestVerdict::Pass;
  // --resume: the tests that ended before the restart count as they ended.
  for (const auto& [name, verdict] : tests_before_restart_) {
    lost = lost || verdict == TestVerdict::Incomplete;
    failed += verdict != TestVerdict::Pass;
  }
  const std::size_t tests = outcome_.tests.size() + tests_before_restart_.size();
  if (lost) {
    outcome_.exit_code = kExitAgentsMissing;
    outcome_.conclusion = "agents were lost during the run";
  } else if (failed > 0) {
    outcome_.exit_code = kExitThresholdFailed;
    outcome_.conclusion = fmt::format("{} of {} tests failed", failed, tests);
  } else {
    outcome_.exit_code = kExitPass;
    outcome_.conclusion = fmt::format("all {} tests passed", tests);
  }
}

}  // namespace orchestration

RunOutcome run_profile(const Profile& profile, const RunOptions& options) {
  orchestration::Orchestrator orchestrator(profile, options);
  return orchestrator.run();
}

}  // namespace tusk
