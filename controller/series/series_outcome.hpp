// A run drawn from its series file alone, for `tusk-controller report` on a run directory that has
// no report.json (a controller killed before it wrote even a checkpoint, or a report lost): the
// run id, and each stream's counters at its last sample, as an incomplete run. Nothing is judged:
// the verdicts need the plans and thresholds only a report keeps.
#pragma once

#include <string>

#include "controller/outcome/run_outcome.hpp"

namespace tusk {

// Throws std::runtime_error naming `path` when it is no series file.
RunOutcome outcome_from_series(const std::string& path);

}  // namespace tusk
