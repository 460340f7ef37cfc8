// report.json's view of a test's host ports' optics (verdict/port_optics.hpp): per port, the module
// as read at the test's end (lanes' TX and RX power, bias, temperature), the FEC mode and counters,
// the error rates between the test's two FEC readings, and the findings with their next steps; and
// per port read every interval (`optics: interval`), its timeline.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "controller/verdict/optics_timeline.hpp"
#include "controller/verdict/port_optics.hpp"

namespace tusk {

nlohmann::ordered_json optics_json(const std::vector<PortOpticsOutcome>& ports,
                                   const std::vector<OpticsTimeline>& timelines);

}  // namespace tusk
