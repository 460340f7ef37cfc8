// The orchestrator's parts, shared by the files of one run: run_orchestrator.cpp (the run from
// start to conclusion, test by test), orchestrator_start.cpp (waiting for agents, syncing their
// clocks, the cabling check, handing out plans), orchestrator_follow.cpp (following a test,
// checkpoints, stopping and collecting it) and orchestrator_method.cpp (a method's steps and its
// hooks). Not for other users: run_profile() (run_orchestrator.hpp) is the way in.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/method/fabric_methods.hpp"
#include "controller/method/method_steps.hpp"
#include "controller/metrics/live_metrics.hpp"
#include "controller/plan/planner.hpp"
#include "controller/plan/shift_schedule.hpp"
#include "controller/run/agent_registry.hpp"
#include "controller/run/control_plane.hpp"
#include "controller/run/follow_pace.hpp"
#include "controller/run/hook_command.hpp"
#include "controller/run/progress_line.hpp"
#include "controller/run/run_data.hpp"
#include "controller/run/run_orchestrator.hpp"
#include "controller/run/switch_watch.hpp"
#include "controller/series/series_file.hpp"

namespace tusk::orchestration {
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

inline constexpr int kClockProbes = 8;
// Patterns without a count: once agents match, wait this long without a newcomer before starting.
inline constexpr auto kSettleTime = 3s;
// How long a profile's hook command may run on after its test (link_failure's down) or at all (up).
inline constexpr auto kHookGrace = std::chrono::milliseconds(30000);

// link_failure's down command while its test runs, and how it ran (for the method's judge).
struct TimedHook {
  std::chrono::milliseconds at{0};
  HookRun run;
  std::map<std::string, std::string> environment;
  std::unique_ptr<HookCommand> running;
  bool failed = false;  // it could not be started
};

inline proto::Envelope envelope_of(const proto::Plan& plan) {
  proto::Envelope envelope;
  *envelope.mutable_plan() = plan;
  return envelope;
}

inline std::int64_t to_ns(std::chrono::milliseconds ms) {
  return std::int64_t{ms.count()} * 1'000'000;
}

inline std::vector<std::uint32_t> most_samples_of(const Profile& profile) {
  std::vector<std::uint32_t> most;
  for (const auto& test : profile.tests) most.push_back(most_samples(test.duration, test.sample_interval));
  return most;
}

// Set by SIGINT or SIGTERM while a run runs (run_orchestrator.cpp): the first signal and its time.
extern std::atomic<bool> g_interrupted;
extern std::atomic<int> g_interrupt_signal;
extern std::atomic<std::int64_t> g_interrupt_ns;

class Orchestrator {
 public:
  Orchestrator(const Profile& profile, const RunOptions& options);

  RunOutcome run();

 private:
  // RUN_DIR/series.sqlite, when the options name a run directory. A run that cannot write it still
  // runs, and says so.
  void open_series_file();

  // Commits what is queued; the file stays open for records that still come.
  void close_series_file();

  void start_control_plane();

  void run_tests();

  // Every agent's plan for test `index`, with how it reaches its peers; nothing (and the run ends)
  // when the test cannot be planned. `name` is the profile test's, for --only-through.
  std::optional<std::vector<AgentPlan>> plans_for(std::size_t index, const std::string& name,
                                                  const std::vector<std::string>& agents,
                                                  const std::vector<std::vector<std::size_t>>* step_peers = nullptr);

  // A method test: its steps one after another, each an ordinary test added to the run, until the
  // method has its answer. The test's outcome holds the steps and what they came to.
  bool run_method(std::size_t index);
  // The method test as its steps came to, once the last has run.
  TestOutcome conclude_method(std::size_t index, const TestSpec& spec, MethodSteps& steps);
  // A schedule's ledger (schedule_ledger.hpp), rewritten as each of its steps is judged.
  void write_ledger(const MethodSteps& steps, std::size_t index);
  // --resume: what the run it goes on with came to before the schedule and the controller's
  // restart; false (the run has failed) when its agents are not the ones it ran with.
  bool begin_resume();
  // --resume: the schedule's finished steps, as the ledger kept them: planned again, recorded
  // from the ledger, not run. False (the run has failed) when they are not this schedule's steps.
  bool restore_steps(MethodSteps& steps, std::size_t index);
  // Which of `agents` are not connected now.
  std::vector<bool> agents_away(const std::vector<std::string>& agents) const;
  // A step none of whose pairs could run, as its outcome.
  TestOutcome unrun_step(std::size_t step_index, const std::string& why);

  std::map<std::string, std::string> hook_environment(const TestSpec& spec) const;

  // link_failure's down command, started by follow_test when it is due: waited for a little after
  // the test (then killed), and the up command run to bring the link back.
  void finish_link_failure(const TestSpec& spec);

  // Starts the timed hook of the running test when it is due; polls it after.
  void drive_timed_hook(std::int64_t planned_start, std::int64_t now);
  // When the timed hook is due (realtime), while it has yet to start.
  std::optional<std::int64_t> timed_hook_due(std::int64_t planned_start) const;

  // The run's agents by group, for a shift schedule counted in groups: the leaf each agent's
  // data-plane address hangs off in the topology file, or the profile's own list.
  ShiftGroups shift_groups(const TestSpec& spec) const;

  // What the run still waits for: the selection's shortfall, or, with every agent it selects
  // there, the agents that may still match its patterns before they settle.
  static std::string waiting_for(const AgentSelection& selection);

  bool wait_for_agents();

  // Fresh clock estimates for every agent of the test; an agent that does not answer keeps offset 0.
  std::map<std::string, ClockSample> sync_clocks();

  // Waits until every agent answered the plan; returns false otherwise, and ends the run, unless
  // `silence_ends_run` is false and agents only stayed silent: they are then plan_silence_.
  bool hand_out_plans(const std::vector<AgentPlan>& plans, int index, bool silence_ends_run = true);
  // Every one of `agents` has been disconnected longer than a lost agent is (RunOptions::lost_after).
  bool all_lost(const std::vector<std::string>& agents) const;

  // One test on `agents`; nothing when it could not start (the run has failed, or, with
  // `silence_ends_run` false, agents in plan_silence_ never answered its plan).
  std::optional<TestOutcome> run_test(std::size_t test_index, const std::vector<AgentPlan>& plans,
                                      const std::vector<std::string>& agents, bool silence_ends_run = true);

  // The switches' LLDP against the topology file, before any traffic; false when `cabling:
  // enforce` stops the run.
  bool check_cabling_first();

  // What the agents' hosts heard on their ports, from their inventories.
  std::vector<HostLldp> hosts_lldp() const;

  // The switches' counters and neighbours, now; a switch that cannot be read is said and skipped.
  std::vector<SwitchReading> read_switches_now(int index, const char* when);

  void follow_test(int index, const TestSpec& spec, std::int64_t planned_start, const std::vector<AgentPlan>& plans);

  // A checkpoint as the run begins, before any agent came: a controller killed while it waits for
  // them still leaves a report.json that says so (and `report` draws it), not a series file alone.
  void write_start_checkpoint();

  // A snapshot of the run handed to RunOptions::checkpoint with what every checkpoint says: the
  // agents and faults so far, and `where` the run was when it was taken (`taken_ns`); `running`, the
  // test under way as judged so far. The finished tests are lent to it, not copied.
  void hand_over(std::optional<TestOutcome> running, std::int64_t taken_ns, const std::string& where);
  // The method test under way as a checkpoint shows it: its steps so far, incomplete.
  TestOutcome method_so_far() const;

  // The run so far, with the test under way judged on its samples up to now: each agent that has
  // no result yet stands in with one made of its streams' latest counters (not completed). The
  // series file is committed first, so it holds every sample the checkpoint counts.
  void checkpoint(int index, const TestSpec& spec, std::int64_t planned_start, const std::vector<AgentPlan>& plans);

  void write_snapshot(int index, const TestSpec& spec, std::int64_t planned_start, const std::vector<AgentPlan>& plans);

  std::string progress_text(int index, const TestSpec& spec, std::int64_t planned_start,
                            const std::map<std::string, AgentLink>& links);

  // The judged test's suspects (a checkpoint's, or its end's) to /metrics and the progress line.
  void publish_suspects(const TestOutcome& test);

  void stop_all(int index, const std::string& reason);

  struct SwitchesRead {
    std::vector<SwitchReading> before, after;
    std::vector<SwitchInterval> intervals;
  };

  TestOutcome collect(int index, const TestSpec& spec, std::int64_t planned_start, const std::vector<AgentPlan>& plans,
                      SwitchesRead switches);

  // What the test's agents sent so far, with its plans: a TestOutcome to judge. For a checkpoint,
  // copied as it judges them (without the streams' bins); handed over once the test is over.
  enum class Collect { checkpoint, take };
  TestOutcome collect_data(int index, const TestSpec& spec, std::int64_t planned_start,
                           const std::vector<AgentPlan>& plans, Collect how);

  void fail_run(int exit_code, const std::string& why);

  // An interrupted run says so, whatever else it came to: by which signal, when, and where it was.
  void conclude_interrupted();

  void conclude();

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
  // The method test under way and its steps so far, for checkpoints: a night's schedule killed
  // in its tenth step leaves the nine before it in report.json.
  const MethodSteps* method_under_way_ = nullptr;
  std::size_t method_index_ = 0;
  std::vector<std::string> plan_silence_;  // a schedule step's agents that never answered its plan
  std::vector<std::string> test_agents_;   // the agents of the test that runs now (a method's step may use fewer)
  std::string phase_ = "while starting";   // where the run is, for an interruption's conclusion
  std::map<std::string, proto::Inventory> inventory_by_name_;
  bool checkpoint_written_ = false;  // the run's first checkpoint, written as its first test starts
  std::string suspects_text_;        // the running test's suspects at its latest checkpoint, for the progress line
  // When each suspect of the test `first_named_test_` was first named, in ms into the test, in the
  // run of checkpoints that has named it since (one that drops it forgets it).
  int first_named_test_ = -1;
  std::map<std::string, std::int64_t> first_named_ms_;
  // --resume: the tests before the schedule, as they ended before the controller's restart.
  std::vector<std::pair<std::string, TestVerdict>> tests_before_restart_;
  bool ledger_failed_ = false;  // the ledger could not be written: said once
  // The profile's and topology file's digests as the run started (file_digest): what a ledger
  // holds a resumed run to, however the files change while the run goes on.
  std::pair<std::uint64_t, std::uint64_t> input_digests_;
};

}  // namespace tusk::orchestration
