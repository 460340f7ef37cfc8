// report.json's view of what the switches counted over a test (verdict/switch_counters.hpp):
// per cable, each end's counter deltas and, per direction, what its receiver counted lost.
#pragma once

#include <nlohmann/json.hpp>

#include "controller/verdict/switch_counters.hpp"

namespace tusk {

nlohmann::ordered_json switch_counters_json(const SwitchCounterEvidence& evidence);

}  // namespace tusk
