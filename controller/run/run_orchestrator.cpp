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
#include "controller/run/judge_test.hpp"
#include "controller/run/progress_line.hpp"
#include "controller/run/run_data.hpp"
#include "controller/run/switch_watch.hpp"
#include "controller/series/series_file.hpp"
#include "controller/switches/host_lldp.hpp"
#include "controller/switches/switch_poller.hpp"
#include "controller/verdict/unreceived_frames.hpp"

namespace tusk {
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr auto kPollInterval = 50ms;

// While a test runs, each poll walks every agent (links, results, the progress line): every 50 ms
// that was a quarter of the controller's CPU at 2,048 agents, more than ingesting their samples.
// Polling less often as the fleet grows keeps that walk's cost about the same at any size, and
// notices the end of a test at most half a second late.
std::chrono::milliseconds follow_interval(std::size_t agents) {
  return std::clamp<std::chrono::milliseconds>(kPollInterval * static_cast<int>(agents / 256), kPollInterval, 500ms);
}
constexpr int kClockProbes = 8;
// Patterns without a count: once agents match, wait this long without a newcomer before starting.
constexpr auto kSettleTime = 3s;
// How long a profile's hook command may run on after its test (link_failure's down) or at all (up).
constexpr auto kHookGrace = std::chrono::milliseconds(30000);

// link_failure's down command while its test runs, and how it ran (for the method's judge).
struct TimedHook {
  std::chrono::milliseconds at{0};
  HookRun run;
  std::map<std::string, std::string> environment;
  std::unique_ptr<HookCommand> running;
  bool failed = false;  // it could not be started
};

std::atomic<bool> g_interrupted{false};
// The first interruption's signal and time (clock_gettime is async-signal-safe).
std::atomic<int> g_interrupt_signal{0};
std::atomic<std::int64_t> g_interrupt_ns{0};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<std::int64_t>::is_always_lock_free);

extern "C" void on_interrupt(int signal) {
  int none = 0;
  if (g_interrupt_signal.compare_exchange_strong(none, signal)) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    g_interrupt_ns = std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
  }
  g_interrupted = true;
}

proto::Envelope envelope_of(const proto::Plan& plan) {
  proto::Envelope envelope;
  *envelope.mutable_plan() = plan;
  return envelope;
}

std::int64_t to_ns(std::chrono::milliseconds ms) {
  return std::int64_t{ms.count()} * 1'000'000;
}

std::vector<std::uint32_t> most_samples_of(const Profile& profile) {
  std::vector<std::uint32_t> most;
  for (const auto& test : profile.tests) most.push_back(most_samples(test.duration, test.sample_interval));
  return most;
}

class Orchestrator {
 public:
  Orchestrator(const Profile& profile, const RunOptions& options)
      : profile_(profile),
        options_(options),
        data_(make_run_id(), most_samples_of(profile)),
        progress_(options.progress_line) {
    outcome_.run_id = data_.with([](RunState& s) { return s.run_id; });
    outcome_.profile = profile;
    outcome_.retest_of = options_.retest_of;
  }

  RunOutcome run() {
    outcome_.started_ns = realtime_ns();
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
    return outcome_;
  }

 private:
  // RUN_DIR/series.sqlite, when the options name a run directory. A run that cannot write it still
  // runs, and says so.
  void open_series_file() {
    if (!options_.run_directory) return;
    const std::string directory = options_.run_directory(outcome_.run_id);
    try {
      std::error_code error;
      std::filesystem::create_directories(directory, error);
      series_.emplace((std::filesystem::path(directory) / kSeriesFileName).string(), outcome_.run_id);
      data_.write_series_to(&*series_);
    } catch (const std::exception& e) {
      spdlog::error("{}", e.what());
      data_.with([&](RunState& s) { s.faults.push_back({realtime_ns(), "", -1, e.what()}); });
    }
  }

  // Commits what is queued; the file stays open for records that still come.
  void close_series_file() {
    if (!series_) return;
    series_->flush();
    outcome_.series_file = series_->path();
    if (const auto problem = series_->problem()) {
      spdlog::error("{}", *problem);
      data_.with([&](RunState& s) { s.faults.push_back({realtime_ns(), "", -1, *problem}); });
    }
  }

  void start_control_plane() {
    AgentRegistry::Listener listener;
    listener.on_record = [this](const std::string& agent, proto::Record& record) {
      // The metrics first: the run takes the record's streams.
      if (options_.live_metrics) options_.live_metrics->on_record(agent, data_.with_names(agent, record));
      data_.on_record(agent, std::move(record));
    };
    listener.on_plan_ack = [this](const std::string& agent, const proto::PlanAck& ack) {
      data_.on_plan_ack(agent, ack);
    };
    listener.on_fault = [this](const std::string& agent, const std::string& what) { data_.on_fault(agent, what); };
    control_plane_.emplace(options_.control, std::move(listener));
    registry_ = &control_plane_->registry();
    if (options_.live_metrics) {
      live_metrics_ = options_.live_metrics->attach(outcome_.run_id, [this] { return registry_->links(); });
    }
  }

  void run_tests() {
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
    const std::size_t declared = profile_.tests.size();
    for (std::size_t i = 0; i < declared; ++i) {
      if (g_interrupted) return;
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

  // Every agent's plan for test `index`, with how it reaches its peers; nothing (and the run ends)
  // when the test cannot be planned. `name` is the profile test's, for --only-through.
  std::optional<std::vector<AgentPlan>> plans_for(std::size_t index, const std::string& name,
                                                  const std::vector<std::string>& agents,
                                                  const std::vector<std::vector<std::size_t>>* step_peers = nullptr) {
    try {
      auto plans = plan_test(profile_, index, agents, outcome_.run_id, step_peers);
      if (options_.only_flows) restrict_plans(plans, options_.only_flows->by_test.at(name));
      for (auto& plan : plans) describe_plan(plan, inventory_by_name_);
      return plans;
    } catch (const PlanError& e) {
      fail_run(kExitUsage, e.what());
      return std::nullopt;
    }
  }

  // A method test: its steps one after another, each an ordinary test added to the run, until the
  // method has its answer. The test's outcome holds the steps and what they came to.
  bool run_method(std::size_t index) {
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
      const std::vector<std::string> agents(agents_.begin(),
                                            agents_.begin() + static_cast<std::ptrdiff_t>(step->agents));
      const auto step_index =
          static_cast<std::size_t>(data_.add_test(most_samples(step->spec.duration, step->spec.sample_interval)));
      if (options_.live_metrics) options_.live_metrics->add_test(step->spec);
      profile_.tests.push_back(std::move(step->spec));
      auto plans = plans_for(step_index, spec.name, agents, step->peers.empty() ? nullptr : &step->peers);
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
      auto outcome = run_test(step_index, *plans, agents);
      if (timed_hook_) finish_link_failure(spec);
      if (!outcome) {
        carry_on = false;
        break;
      }
      steps.record(std::move(*outcome));
    }
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
    // What the steps together fall short of (a schedule's link coverage, a buffer under
    // min_absorbed) fails the test too.
    if (test.verdict == TestVerdict::Pass && !test.problems.empty()) test.verdict = TestVerdict::Fail;
    test.method = std::move(result);
    spdlog::info("test {} '{}': {} after {} steps", index, spec.name, to_string(test.verdict),
                 test.method->steps.size());
    outcome_.tests.push_back(std::move(test));
    return carry_on && !g_interrupted;
  }

  std::map<std::string, std::string> hook_environment(const TestSpec& spec) const {
    return {{"TUSK_RUN_ID", outcome_.run_id}, {"TUSK_TEST", spec.name}, {"TUSK_LINK", spec.method->link}};
  }

  // link_failure's down command, started by follow_test when it is due: waited for a little after
  // the test (then killed), and the up command run to bring the link back.
  void finish_link_failure(const TestSpec& spec) {
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
  void drive_timed_hook(std::int64_t planned_start, std::int64_t now) {
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

  // The run's agents by group, for a shift schedule counted in groups: the leaf each agent's
  // data-plane address hangs off in the topology file, or the profile's own list.
  ShiftGroups shift_groups(const TestSpec& spec) const {
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
    for (const auto& name : agents_)
      address_of[name] = own_data_plane_address(spec.engine, inventory_by_name_.at(name));
    return group_agents(
        agents_, [&](const std::string& agent) { return topology->attached_to(address_of[agent]); },
        fmt::format("test '{}': group_by: leaf: {} places no cable at these agents' data-plane addresses", spec.name,
                    topology->file()));
  }

  // What the run still waits for: the selection's shortfall, or, with every agent it selects
  // there, the agents that may still match its patterns before they settle.
  static std::string waiting_for(const AgentSelection& selection) {
    return selection.shortfall.empty() ? "every agent selected so far is here; more may match the profile's "
                                         "patterns until none has come for a while"
                                       : selection.shortfall;
  }

  bool wait_for_agents() {
    const auto wait = options_.wait_override.value_or(profile_.agents.wait);
    const auto deadline = SteadyClock::now() + wait;
    const bool settle = profile_.agents.hosts.empty() && !profile_.agents.patterns.empty() && !profile_.agents.count;
    std::size_t last_size = 0;
    auto last_change = SteadyClock::now();
    auto last_log = SteadyClock::now();
    spdlog::info("waiting up to {} for the profile's agents", units::format_duration(wait));
    while (true) {
      std::vector<std::string> connected;
      for (const auto& link : registry_->links()) {
        if (link.connected) connected.push_back(link.name);
      }
      auto selection = select_agents(profile_.agents, connected);
      const auto now = SteadyClock::now();
      if (selection.chosen.size() != last_size) {
        last_size = selection.chosen.size();
        last_change = now;
      }
      if (selection.complete && (!settle || now - last_change >= kSettleTime)) {
        agents_ = selection.chosen;
        spdlog::info("running on {} agents: {}", agents_.size(), fmt::join(agents_, ", "));
        return true;
      }
      if (now >= deadline || g_interrupted) {
        outcome_.missing_agents = selection.missing;
        if (g_interrupted) {
          phase_ = fmt::format("while waiting for agents ({} connected; {})", connected.size(), selection.shortfall);
          return false;
        }
        fail_run(kExitAgentsMissing,
                 fmt::format("agents missing after {}: {}", units::format_duration(wait), selection.shortfall));
        return false;
      }
      if (now - last_log >= 5s) {
        last_log = now;
        spdlog::info("still waiting for agents ({} connected): {}", connected.size(), waiting_for(selection));
      }
      progress_.update(fmt::format("waiting for agents: {} connected, {}", connected.size(), waiting_for(selection)));
      std::this_thread::sleep_for(kPollInterval);
    }
  }

  // Fresh clock estimates for every agent of the test; an agent that does not answer keeps offset 0.
  std::map<std::string, ClockSample> sync_clocks() {
    registry_->sync_clocks(test_agents_, kClockProbes);
    const auto deadline = SteadyClock::now() + 3s + clock_sync_duration(test_agents_.size(), kClockProbes);
    std::map<std::string, ClockSample> clocks;
    while (true) {
      clocks.clear();
      for (const auto& link : registry_->links()) {
        if (link.clock && link.clock_samples >= kClockProbes) clocks[link.name] = *link.clock;
      }
      std::size_t ready = 0;
      for (const auto& name : test_agents_) ready += clocks.count(name);
      if (ready == test_agents_.size() || SteadyClock::now() >= deadline) break;
      std::this_thread::sleep_for(kPollInterval);
    }
    for (const auto& link : registry_->links()) {
      if (link.clock) clocks.try_emplace(link.name, *link.clock);
    }
    for (const auto& name : test_agents_) {
      if (!clocks.count(name)) data_.on_fault(name, "no clock estimate: start time assumes its clock is ours");
    }
    return clocks;
  }

  // Waits until every agent answered the plan; returns false (and ends the run) otherwise.
  bool hand_out_plans(const std::vector<AgentPlan>& plans, int index) {
    data_.judge_windows(index, profile_.tests[index]);
    data_.judge_optics_intervals(index, profile_.tests[index]);
    for (const auto& plan : plans) {
      data_.expect(plan.agent, index, most_streams_of(plan.plan));
      registry_->set_standing_orders(plan.agent, {envelope_of(plan.plan)});
    }
    const auto deadline = SteadyClock::now() + options_.plan_ack_timeout;
    while (true) {
      std::vector<std::string> refused, waiting;
      data_.with([&](RunState& s) {
        for (const auto& name : test_agents_) {
          const auto& ack = s.tests[{index, name}].plan_ack;
          if (!ack) {
            waiting.push_back(name);
          } else if (!ack->ok()) {
            refused.push_back(fmt::format("{}: {}", name, printable(ack->error())));
          }
        }
      });
      if (waiting.empty() && refused.empty()) return true;
      if (!refused.empty() && waiting.empty()) {
        stop_all(index, "plan refused");
        fail_run(kExitUsage,
                 fmt::format("test '{}': plan refused by {}", profile_.tests[index].name, fmt::join(refused, "; ")));
        return false;
      }
      if (SteadyClock::now() >= deadline || g_interrupted) {
        stop_all(index, g_interrupted ? "run interrupted" : "plan not acknowledged");
        if (!g_interrupted) {
          fail_run(kExitAgentsMissing, fmt::format("test '{}': no answer to the plan from {}",
                                                   profile_.tests[index].name, fmt::join(waiting, ", ")));
        }
        return false;
      }
      progress_.update(fmt::format("test '{}': {} of {} agents prepared", profile_.tests[index].name,
                                   test_agents_.size() - waiting.size(), test_agents_.size()));
      std::this_thread::sleep_for(kPollInterval);
    }
  }

  // One test on `agents`; nothing when it could not start (the run has failed).
  std::optional<TestOutcome> run_test(std::size_t test_index, const std::vector<AgentPlan>& plans,
                                      const std::vector<std::string>& agents) {
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
    std::map<std::string, std::string> hosts;
    for (const auto& [name, inventory] : inventory_by_name_) hosts[name] = inventory.hostname();
    std::vector<AgentPlan> timed_plans = plans;
    set_peer_clock_offsets(timed_plans, offsets, hosts);
    if (!hand_out_plans(timed_plans, index)) return std::nullopt;

    // Far enough ahead that every StartAt arrives first, even on a slow or large fabric.
    std::int64_t max_rtt = 0;
    for (const auto& [name, clock] : clocks) max_rtt = std::max(max_rtt, clock.rtt_ns);
    const std::int64_t margin = start_margin_ns(max_rtt, test_agents_.size());
    const std::int64_t planned_start = realtime_ns() + margin;
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

  // The switches' LLDP against the topology file, before any traffic; false when `cabling:
  // enforce` stops the run.
  bool check_cabling_first() {
    if (profile_.cabling == CablingMode::Off) return true;
    std::vector<HostLldp> hosts = hosts_lldp();
    if (!options_.topology) {
      outcome_.cabling = cabling_not_checked("no topology file to check it against (run --topology FILE)");
    } else if (options_.switches.empty() && hosts.empty()) {
      outcome_.cabling = cabling_not_checked(
          "no switch to read (--snmp-credentials, and a management address in the topology file) and no agent's "
          "host heard LLDP on a port (lldpd, or a DPDK port's own frames)");
    } else {
      phase_ = "checking the cabling";
      outcome_.cabling = check_cabling(*options_.topology, read_switches(options_.switches), hosts);
    }
    const CablingCheck& check = *outcome_.cabling;
    if (check.checked()) {
      spdlog::info("{}", check.text());
    } else {
      spdlog::warn("{}", check.text());
    }
    for (const auto& finding : check.findings) spdlog::warn("cabling: {}", finding.text());
    if (profile_.cabling != CablingMode::Enforce) return true;
    if (!check.checked()) {
      fail_run(kExitUsage,
               fmt::format("cabling: enforce: nothing was checked, so no traffic was started: {}", check.not_checked));
      return false;
    }
    if (check.clean()) return true;
    fail_run(kExitThresholdFailed,
             fmt::format("cabling: enforce: {} cable{} not where {} says, so no traffic was started: {}",
                         check.findings.size(), check.findings.size() == 1 ? " is" : "s are", options_.topology->file(),
                         check.findings.front().text()));
    return false;
  }

  // What the agents' hosts heard on their ports, from their inventories.
  std::vector<HostLldp> hosts_lldp() const {
    std::vector<HostLldp> hosts;
    for (const auto& name : agents_) {
      const auto inventory = inventory_by_name_.find(name);
      if (inventory == inventory_by_name_.end()) continue;
      auto heard = hosts_lldp_of(name, inventory->second);
      hosts.insert(hosts.end(), std::make_move_iterator(heard.begin()), std::make_move_iterator(heard.end()));
    }
    return hosts;
  }

  // The switches' counters and neighbours, now; a switch that cannot be read is said and skipped.
  std::vector<SwitchReading> read_switches_now(int index, const char* when) {
    if (options_.switches.empty()) return {};
    const auto began = SteadyClock::now();
    auto readings = read_switches(counters_only(options_.switches));
    std::size_t unreadable = 0;
    for (const auto& reading : readings) {
      if (reading.ok()) continue;
      ++unreadable;
      spdlog::warn("test {}: {} the test: {}", index, when, reading.error);
    }
    spdlog::info("test {}: read {} switches {} the test in {} ms{}", index, readings.size(), when,
                 std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - began).count(),
                 unreadable ? fmt::format(" ({} could not be read)", unreadable) : std::string());
    return readings;
  }

  void follow_test(int index, const TestSpec& spec, std::int64_t planned_start, const std::vector<AgentPlan>& plans) {
    const std::int64_t end = planned_start + to_ns(spec.duration);
    // The run's first checkpoint as its first test starts (its agents, plans and what was asked),
    // so a controller killed within the first interval still leaves a report; then every interval.
    auto next_checkpoint =
        SteadyClock::now() + (checkpoint_written_ ? options_.checkpoint_every : std::chrono::milliseconds(0));
    // Results follow the end at once; allow for an agent that reconnects just then.
    const std::int64_t deadline = end + 2 * to_ns(options_.control.lease) + 5'000'000'000;
    while (true) {
      std::map<std::string, AgentLink> links;
      for (auto& link : registry_->links()) links.emplace(link.name, std::move(link));
      std::vector<std::string> pending;
      data_.with([&](RunState& s) {
        for (const auto& name : test_agents_) {
          auto& agent = s.tests[{index, name}];
          if (agent.result || agent.lost) continue;
          auto link = links.find(name);
          if (link != links.end() && !link->second.connected && link->second.away_for > options_.lost_after) {
            agent.lost = true;
            s.faults.push_back({realtime_ns(), name, index,
                                fmt::format("agent lost: disconnected for more than {}",
                                            units::format_duration(options_.lost_after))});
            continue;
          }
          pending.push_back(name);
        }
      });
      if (pending.empty()) return;
      const std::int64_t now = realtime_ns();
      if (now >= deadline || g_interrupted) {
        data_.with([&](RunState& s) {
          for (const auto& name : pending) {
            s.tests[{index, name}].lost = !g_interrupted;
            s.faults.push_back({now, name, index, g_interrupted ? "run interrupted" : "no result by the deadline"});
          }
        });
        return;
      }
      if (!timed_hook_ || !timed_hook_->failed) drive_timed_hook(planned_start, now);
      if (options_.progress_line) progress_.update(progress_text(index, spec, planned_start, links));
      if (options_.checkpoint && options_.checkpoint_every.count() > 0 && SteadyClock::now() >= next_checkpoint) {
        checkpoint(index, spec, planned_start, plans);
        next_checkpoint = SteadyClock::now() + options_.checkpoint_every;
      }
      std::this_thread::sleep_for(follow_interval(test_agents_.size()));
    }
  }

  // A checkpoint as the run begins, before any agent came: a controller killed while it waits for
  // them still leaves a report.json that says so (and `report` draws it), not a series file alone.
  void write_start_checkpoint() {
    if (!options_.checkpoint) return;
    RunOutcome snapshot = outcome_;
    snapshot.checkpoint_ns = realtime_ns();
    hand_over(std::move(snapshot), "no test had started");
  }

  // A snapshot of the run handed to RunOptions::checkpoint with what every checkpoint says: the
  // agents and faults so far, and `where` the run was when it was taken.
  void hand_over(RunOutcome snapshot, const std::string& where) {
    snapshot.agents = registry_->agents();
    snapshot.faults = data_.with([](RunState& s) { return s.faults; });
    snapshot.series_file = series_ ? series_->path() : "";
    snapshot.finished_ns = snapshot.checkpoint_ns;
    snapshot.exit_code = kExitAgentsMissing;
    snapshot.conclusion = fmt::format(
        "incomplete: {} at this checkpoint ({}); no final report was written after it, so the controller was killed "
        "or its host went down",
        where, utc_iso_time(snapshot.checkpoint_ns));
    try {
      options_.checkpoint(snapshot);
    } catch (const std::exception& e) {
      spdlog::warn("checkpoint not written: {}", e.what());
    }
  }

  // The run so far, with the test under way judged on its samples up to now: each agent that has
  // no result yet stands in with one made of its streams' latest counters (not completed). The
  // series file is committed first, so it holds every sample the checkpoint counts.
  void checkpoint(int index, const TestSpec& spec, std::int64_t planned_start, const std::vector<AgentPlan>& plans) {
    if (series_) series_->flush();
    write_snapshot(index, spec, planned_start, plans);
    checkpoint_written_ = true;
    return_free_heap_pages();
  }

  void write_snapshot(int index, const TestSpec& spec, std::int64_t planned_start,
                      const std::vector<AgentPlan>& plans) {
    RunOutcome snapshot = outcome_;
    snapshot.checkpoint_ns = realtime_ns();
    TestOutcome test = collect_data(index, spec, planned_start, plans, Collect::copy);
    for (auto& [name, agent] : test.per_agent) {
      if (agent.result || agent.samples.empty()) continue;
      proto::TestResult result;
      result.set_run_id(outcome_.run_id);
      result.set_test_index(index);
      result.set_completed(false);
      result.set_stop_reason("still running at the checkpoint");
      result.set_samples(agent.samples.highest());
      std::uint64_t elapsed_ms = 0;
      for (const auto& [id, series] : agent.series) {
        *result.add_streams() = series.latest_named();
        elapsed_ms = std::max(elapsed_ms, series.latest_elapsed_ms());
      }
      result.set_actual_start_agent_ns(agent.planned_start_agent_ns);
      result.set_actual_stop_agent_ns(agent.planned_start_agent_ns + static_cast<std::int64_t>(elapsed_ms) * 1'000'000);
      agent.result = std::move(result);
    }
    judge_test(test, options_.topology.get());
    snapshot.tests.push_back(std::move(test));
    hand_over(std::move(snapshot), fmt::format("still running test {} '{}'", index, spec.name));
  }

  std::string progress_text(int index, const TestSpec& spec, std::int64_t planned_start,
                            const std::map<std::string, AgentLink>& links) {
    const double elapsed = std::max<std::int64_t>(0, realtime_ns() - planned_start) / 1e9;
    const double total = spec.duration.count() / 1e3;
    double rate_bps = 0;
    std::uint64_t errors = 0;
    data_.with([&](RunState& s) {
      for (const auto& name : test_agents_) {
        for (const auto& [id, series] : s.tests[{index, name}].series) {
          rate_bps += series.latest_tx_bps();
          for (auto counter :
               {counters::kBitErrors, counters::kLostFrames, counters::kCompletionErrors, counters::kIntegrityErrors}) {
            errors += series.latest_counter(counter);
          }
        }
      }
    });
    const auto connected = std::count_if(test_agents_.begin(), test_agents_.end(), [&](const std::string& name) {
      auto link = links.find(name);
      return link != links.end() && link->second.connected;
    });
    return fmt::format("[{}/{} {}] {:.1f}/{:.1f} s  {}  errors {}  agents {}/{}", index + 1, profile_.tests.size(),
                       spec.name, std::min(elapsed, total), total, units::format_bit_rate(rate_bps), errors, connected,
                       test_agents_.size());
  }

  void stop_all(int index, const std::string& reason) {
    proto::Envelope stop;
    stop.mutable_stop()->set_run_id(outcome_.run_id);
    stop.mutable_stop()->set_test_index(index);
    stop.mutable_stop()->set_reason(reason);
    for (const auto& name : test_agents_) {
      registry_->set_standing_orders(name, {});
      registry_->send(name, stop);
    }
  }

  struct SwitchesRead {
    std::vector<SwitchReading> before, after;
    std::vector<SwitchInterval> intervals;
  };

  TestOutcome collect(int index, const TestSpec& spec, std::int64_t planned_start, const std::vector<AgentPlan>& plans,
                      SwitchesRead switches) {
    TestOutcome test = collect_data(index, spec, planned_start, plans, Collect::take);
    test.switches_before = std::move(switches.before);
    test.switches_after = std::move(switches.after);
    test.switch_intervals = std::move(switches.intervals);
    judge_test(test, options_.topology.get());
    spdlog::info("test {} '{}': {}{}", index, spec.name, to_string(test.verdict),
                 test.start_skew_ns
                     ? ", start skew " + units::format_duration(std::chrono::nanoseconds(*test.start_skew_ns))
                     : "");
    return test;
  }

  // What the test's agents sent so far, with its plans: a TestOutcome to judge.
  // What the agents sent for the test: a copy for a checkpoint, handed over once it is over.
  enum class Collect { copy, take };
  TestOutcome collect_data(int index, const TestSpec& spec, std::int64_t planned_start,
                           const std::vector<AgentPlan>& plans, Collect how) {
    TestOutcome test;
    test.index = index;
    test.spec = spec;
    for (const auto& plan : plans) test.plans[plan.agent] = plan.plan;
    test.agents = test_agents_;
    test.planned_start_ns = planned_start;
    if (how == Collect::take) {
      test.per_agent = data_.take_test(index, test_agents_);
    } else {
      data_.with([&](RunState& s) {
        for (const auto& name : test_agents_) test.per_agent[name] = s.tests[{index, name}];
      });
    }
    return test;
  }

  void fail_run(int exit_code, const std::string& why) {
    spdlog::error("{}", why);
    if (outcome_.conclusion.empty()) {
      outcome_.exit_code = exit_code;
      outcome_.conclusion = why;
    }
  }

  // An interrupted run says so, whatever else it came to: by which signal, when, and where it was.
  void conclude_interrupted() {
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

  void conclude() {
    if (!outcome_.conclusion.empty()) return;  // fail_run already decided
    const bool lost =
        std::any_of(outcome_.tests.begin(), outcome_.tests.end(), [](const TestOutcome& t) { return t.agents_lost; });
    std::size_t failed = 0;
    for (const auto& test : outcome_.tests) failed += test.verdict != TestVerdict::Pass;
    if (lost) {
      outcome_.exit_code = kExitAgentsMissing;
      outcome_.conclusion = "agents were lost during the run";
    } else if (failed > 0) {
      outcome_.exit_code = kExitThresholdFailed;
      outcome_.conclusion = fmt::format("{} of {} tests failed", failed, outcome_.tests.size());
    } else {
      outcome_.exit_code = kExitPass;
      outcome_.conclusion = fmt::format("all {} tests passed", outcome_.tests.size());
    }
  }

  // A copy: a method's steps are added to its tests as they run, after the profile's own.
  Profile profile_;
  const RunOptions& options_;
  // Declared before data_, which writes to it, and control_plane_, whose io thread feeds data_.
  std::optional<SeriesFile> series_;
  RunData data_;
  RunOutcome outcome_;
  ProgressLine progress_;
  std::optional<ControlPlane> control_plane_;
  AgentRegistry* registry_ = nullptr;
  // Declared after control_plane_: the metrics stop asking the registry before it goes.
  LiveMetrics::Attachment live_metrics_;
  std::vector<std::string> agents_;
  std::optional<TimedHook> timed_hook_;
  std::optional<HookRun> link_failure_run_;
  std::vector<std::string> test_agents_;  // the agents of the test that runs now (a method's step may use fewer)
  std::string phase_ = "while starting";  // where the run is, for an interruption's conclusion
  std::map<std::string, proto::Inventory> inventory_by_name_;
  bool checkpoint_written_ = false;  // the run's first checkpoint, written as its first test starts
};

}  // namespace

RunOutcome run_profile(const Profile& profile, const RunOptions& options) {
  Orchestrator orchestrator(profile, options);
  return orchestrator.run();
}

}  // namespace tusk
