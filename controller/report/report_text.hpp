// `tusk-controller report RUN_DIR --text`: a run's summary read back from its report.json, for
// runs whose stdout went to a batch log: each test's streams with their verdicts, the suspects and
// host problems with what to check next, the problems, warnings and faults, and the result.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace tusk {

// Throws std::runtime_error when `report` is not a Tusk report (no run_id or tests).
std::string report_text(const nlohmann::ordered_json& report);

}  // namespace tusk
