// A run against its baseline, an earlier run of the history (profile `baseline: last|RUN_ID`):
// each stream and fabric link against the same one then, with `tusk-controller compare`'s
// default thresholds (controller/history/run_comparison.hpp), as the run ends and before its
// report is written, so report.json carries what got worse. A regression is a warning: the
// run's own thresholds are its verdict.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tusk {

struct BaselineCheck {
  nlohmann::ordered_json json;        // report.json "baseline"
  std::vector<std::string> warnings;  // one line per regression, or why nothing was compared
};

// `baseline` is "last" (the newest run of the same profile name recorded in the history, other
// than this one) or a run id. `report` is this run's report.json document. Never throws: a
// history that cannot be read or a baseline not found is said in the result.
BaselineCheck check_against_baseline(const std::string& baseline, const nlohmann::ordered_json& report,
                                     const std::string& history_path);

// report.json's "baseline" in one line, for the summary and the page: "against baseline RUN: 2
// regressions over 24 streams compared", "... nothing got worse ...", or why it was not compared;
// "" when the document has none.
std::string baseline_headline(const nlohmann::ordered_json& baseline);
// The headline and a `  worse: SUBJECT: TEXT` line per regression, each line ending in a newline;
// the summary of a run as it ends and `report --text` print the same; "" when there is none.
std::string baseline_lines(const nlohmann::ordered_json& baseline);

}  // namespace tusk
