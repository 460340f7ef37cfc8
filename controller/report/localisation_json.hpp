// report.json's localisation of a test: its routed flows with their traced paths, the suspect links
// (each with the other kinds of fault it shows) and the host problems (link_localisation.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include "controller/outcome/run_outcome.hpp"

namespace tusk {

nlohmann::ordered_json localisation_json(const TestOutcome& test);

}  // namespace tusk
