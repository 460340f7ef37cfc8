// report.json's views of the switches' evidence: what they counted over a test
// (verdict/switch_counters.hpp), per cable, each end's counter deltas and, per direction, what its
// receiver counted lost; and the run's cabling check (verdict/cabling_check.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include "controller/verdict/cabling_check.hpp"
#include "controller/verdict/switch_counters.hpp"

namespace tusk {

nlohmann::ordered_json switch_counters_json(const SwitchCounterEvidence& evidence);
// What the switches counted lost in each interval of a test (--snmp-interval): every interval's
// count, and those that counted loss or could not be read, each with its lossy directions.
nlohmann::ordered_json switch_intervals_json(const std::vector<SwitchInterval>& intervals);
// The run's cabling check: what LLDP found against the topology file.
nlohmann::ordered_json cabling_json(const CablingCheck& check);

}  // namespace tusk
