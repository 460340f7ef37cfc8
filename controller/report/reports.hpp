// The files and tables a run leaves behind. All read a finished RunOutcome; none changes it.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "controller/run/run_outcome.hpp"

namespace tusk {

inline constexpr const char* kReportSchema = "tusk.report/1";

// report.json: versioned; every test, stream, counter, per-second series, start skew and fault.
nlohmann::ordered_json report_json(const RunOutcome& outcome);
// junit.xml: one testcase per stream (link or flow), for burn-in pipelines.
std::string report_junit(const RunOutcome& outcome);
// The table printed at the end of a run.
std::string summary_table(const RunOutcome& outcome);

// Writes report.json and junit.xml into `directory` (created). Throws std::runtime_error naming
// the file that could not be written.
void write_reports(const RunOutcome& outcome, const std::string& directory);

}  // namespace tusk
