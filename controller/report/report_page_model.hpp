// What report.html draws, made from report.json: the run's facts and, per test, its streams as
// columns with their per-interval series, the BER table, the events on the time axis and the
// localisation. Every number is the report's; only the layout is the page's.
#pragma once

#include <nlohmann/json.hpp>

namespace tusk {

// Throws std::runtime_error when `report` is not a Tusk report.json. Fields an older report lacks
// come out null or empty, never as an error: the page says what it does not have.
nlohmann::ordered_json report_page_model(const nlohmann::ordered_json& report);

}  // namespace tusk
