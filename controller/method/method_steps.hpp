// A method test as the run sees it: a sequence of steps, each an ordinary test, where the next step
// may depend on what the last one measured (a throughput search halves its bracket).
//
// Used by one thread (the run's orchestration): next() gives a step, record() takes its outcome,
// and finish() gives the method's result once next() has nothing more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/method/method_result.hpp"
#include "controller/plan/shift_schedule.hpp"

namespace tusk {

struct PlannedStep {
  TestSpec spec;       // an ordinary test: its size, rate, duration and thresholds set for the step
  std::size_t agents;  // how many of the run's agents take part: the first ones, in name order
  // A shift schedule's step: whom each agent sends to (by index); empty: the spec's topology says.
  std::vector<std::vector<std::size_t>> peers;
};

// A shift step among the agents that can take part in it.
struct StepCast {
  std::vector<std::size_t> agents;                            // the run's agents that take part, in order
  std::vector<std::vector<std::size_t>> peers;                // whom each of them sends to, as positions in `agents`
  std::vector<std::pair<std::size_t, std::size_t>> left_out;  // planned (sender, receiver) pairs, the run's indices
};
// `away[i]`: the run's agent i cannot take part (not connected when the step is planned). Its
// pairs, both ways, are left out; the rest of the step runs as planned.
StepCast cast_step(const PlannedStep& step, const std::vector<bool>& away);

class MethodSteps {
 public:
  // `test` has a method; `agents` is the run's agent count; `groups` the agents' groups, for a shift
  // schedule counted in groups. Throws PlanError when a shift schedule has no such step.
  MethodSteps(const TestSpec& test, std::size_t agents, ShiftGroups groups = {});

  std::optional<PlannedStep> next();
  // The outcome of the step next() gave last; `not_covered`: the pairs it planned that did not run.
  // A search stops at a step that lost agents or could not measure; a schedule goes on (its
  // coverage then says what the night did not exercise).
  void record(TestOutcome outcome, std::vector<UncoveredPair> not_covered = {});
  // A step of a resumed schedule (schedule_ledger.hpp): what the step next() gave last came to
  // before the controller restarted, its row and its outcome as the fold left it, recorded as
  // record() had recorded it, not judged again. False (and nothing recorded) when the row is not
  // of that step: the schedule is not the one the ledger kept.
  bool restore(MethodStep row, TestOutcome outcome);
  // The schedule's flow table and completeness as of the last step restored.
  void restore_schedule(std::shared_ptr<FlowTable> flows, bool complete);
  // What a shift schedule does with a step's outcome once its row is made (step_fold.hpp: its flows
  // join the schedule's table, its passing streams go); without one the outcome is kept whole.
  using StepFold = std::function<void(TestOutcome& outcome, std::uint32_t step, MethodResult& result)>;
  void set_step_fold(StepFold fold) { fold_ = std::move(fold); }
  // The method's result; the method test's verdict follows from it (method_verdict).
  MethodResult finish();
  // The steps recorded so far (a checkpoint's view of a method under way).
  const MethodResult& so_far() const { return result_; }

  // Every step, for a method whose steps do not depend on what they measure (sweep, incast,
  // congestion_control); nothing for a search (throughput, frame_loss_rate). Leaves this as it was.
  std::optional<std::vector<PlannedStep>> fixed_steps() const;
  // The most trials a search may take: each at most max_trials per frame size (and one latency
  // trial each), or, stepping down, one per step of the rate; 0 for a method of fixed steps.
  std::size_t most_trials() const;
  // The fewest: one per frame size (all of the rate carried lossless), two stepping down.
  std::size_t least_trials() const;

 private:
  std::optional<PlannedStep> next_throughput();
  std::optional<PlannedStep> next_frame_loss();
  std::optional<PlannedStep> next_shift();
  PlannedStep make_step(std::uint32_t frame_size, const StepRate& rate, std::size_t senders);
  void update_search(const MethodStep& step);

  TestSpec test_;
  MethodSpec method_;
  std::size_t agents_;
  ShiftGroups groups_;
  std::vector<std::uint32_t> shifts_;  // shift: the step numbers that run
  MethodResult result_;
  std::optional<MethodStep> pending_;  // the step handed out, waiting for its outcome
  std::size_t position_ = 0;           // sweep: step number; frame_loss_rate and throughput: frame size number
  std::size_t size_step_ = 0;          // frame_loss_rate: steps of this size so far
  std::size_t lossless_run_ = 0;       // frame_loss_rate: steps in a row of this size that lost nothing
  bool latency_done_ = false;          // throughput: this size's latency trial ran
  bool stopped_ = false;               // a step could not complete: nothing more runs
  StepFold fold_;
};

// Whether the method's steps lose frames by design (they overload a port, or take a link down): the
// safe defaults on loss, gaps and flaps then judge none of them, only what the profile wrote.
bool method_loses_by_design(MethodKind kind);
// Whether the steps' flows are localised together once the steps are done (judge_steps_together):
// a schedule's steps, and ecmp_balance's one step, whose flows all cross the fabric as they are.
bool method_localises_steps_together(MethodKind kind);

// What every step of the method test `test` is judged on: its thresholds less those the method's
// steps measure rather than obey (a search's loss) and the safe defaults a method that loses by
// design breaks.
std::vector<Threshold> method_step_thresholds(const TestSpec& test);

// Pass when every step passed (a throughput trial's loss is what it measures, not a failure);
// Incomplete when a step lost agents or could not run; Fail otherwise.
TestVerdict method_verdict(const MethodResult& result);

// What the method found that fails it (head-of-line blocking), one line each.
std::vector<std::string> method_problems(const MethodResult& result);
// What a reader must know of its numbers: searches not resolved within their trials, bounds that
// are the tester's (host drops, a sender short of its rate).
std::vector<std::string> method_warnings(const MethodResult& result);

}  // namespace tusk
