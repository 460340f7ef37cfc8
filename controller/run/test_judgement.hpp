// Judging one finished test: what each agent sent (test.per_agent), against what was asked (the
// spec, the plans, the agents, the planned start), becomes the test's starts, problems, judged
// streams, path faults, localisation, warnings, engine result and verdict. A pure function of its
// input and the topology, so a test is judged the same way whoever asks and however often.
#pragma once

#include <vector>

#include "controller/outcome/run_outcome.hpp"
#include "controller/topology/fabric_topology.hpp"

namespace tusk {

// `test` holds index, spec, agents, plans, planned_start_ns and per_agent; the rest is filled.
// Each agent's result gives its streams to the verdicts (test.streams): its own list is left empty.
// topology: names for the links localisation blames; null names them by addresses.
void judge_test(TestOutcome& test, const FabricTopology* topology);

// A schedule's steps (each judged by judge_test) judged together: their streams move into the
// test's, each marked with its step (the steps keep their rows, problems and warnings; their own
// localisations, which indexed those streams, go), and are localised at once, so a link crossed
// by failing flows in several steps gathers all their evidence; one link coverage, judged
// against min_link_coverage (a problem of the test's). `test.method` is set from `steps` after.
void judge_steps_together(TestOutcome& test, MethodResult& steps, const FabricTopology* topology);

// What a method's steps read of the fabric, once each step is judged: their ports' optics become
// the test's, a port read in many steps kept once, as its last failing step or else its last step
// read it (each step's findings stay among its problems and warnings); their switch readings,
// already counted into each step's switch_counters, are let go. A long schedule then holds one
// reading a port and none a switch. The test's link_evidence rows are made of what it then holds.
void fold_step_evidence(TestOutcome& test, std::vector<TestOutcome>& steps);

}  // namespace tusk
