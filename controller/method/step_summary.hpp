// One method step's row from its outcome: frames sent, received and lost, latency and NIC counters,
// summed over the step's streams the way the verdict reads them.
#pragma once

#include "controller/method/method_result.hpp"

namespace tusk {

// Fills the measured part of `step` (frames, loss, latency, NIC counters, verdict) from `outcome`.
void summarise_step(const TestOutcome& outcome, MethodStep& step);

// RFC 2889 congestion control from its one step: the first of the step's agents is the congested
// port, the second the uncongested one; `allowed` is the loss the uncongested flow may have.
CongestionResult congestion_of(const TestOutcome& outcome, double allowed);

}  // namespace tusk
