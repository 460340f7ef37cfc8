// report.json's views of the switches' evidence: what they counted over a test
// (verdict/switch_counters.hpp), per cable, each end's counter deltas and, per direction, what its
// receiver counted lost; and the run's cabling check (verdict/cabling_check.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include "controller/verdict/cabling_check.hpp"
#include "controller/verdict/switch_counters.hpp"

namespace tusk {

nlohmann::ordered_json switch_counters_json(const SwitchCounterEvidence& evidence);
// The run's cabling check: what LLDP found against the topology file.
nlohmann::ordered_json cabling_json(const CablingCheck& check);

}  // namespace tusk
