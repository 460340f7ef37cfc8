// A schedule's finished step folded into the schedule: its flows join the schedule's flow table
// (what the combined localisation and link coverage read; the clean ones as sums per link), and of
// its judged streams only those a report shows in full stay in memory: the failing and outlying
// ones, and both streams of every flow the table keeps (one that failed, lost or damaged anything:
// the sender's carries its trace). The rest leave with the step: its row and its path faults count
// them, and the series file holds every sample.
#pragma once

#include <cstdint>

#include "controller/method/method_result.hpp"
#include "controller/outcome/run_outcome.hpp"
#include "controller/verdict/flow_table.hpp"

namespace tusk {

// `step`: 1-based. The steps before it are `result`'s step outcomes (the test's streams are
// theirs, step after step); the step's flows join `result.schedule_flows` (made on the first).
// Drops the step's own localisation. MethodSteps::set_step_fold takes it.
void fold_schedule_step(TestOutcome& outcome, std::uint32_t step, MethodResult& result);

}  // namespace tusk
