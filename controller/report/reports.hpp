// The files and tables a run leaves behind. All read a finished RunOutcome; none changes it.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>
#include <string>

#include "controller/outcome/run_outcome.hpp"

namespace tusk {

// /2: each stream's series in bins ("bins", the test's "samples_per_bin") and each agent's samples
// as ranges ("sample_ranges"); /1 had every sample ("series", "sample_indexes").
inline constexpr const char* kReportSchema = "tusk.report/2";

// Whether a stream's JSON holds its series ("bins"). Without: the run's summary as the summary
// table, the baseline check, the history and the actions read it (none reads a series), at a
// fraction of the document's memory (a run of 4,032 streams: the document with its bins doubled
// the controller's steady memory as the run ended).
enum class StreamBins { Written, Left };

// report.json: versioned; every test, stream, counter, per-second series, start skew and fault.
nlohmann::ordered_json report_json(const RunOutcome& outcome, StreamBins bins = StreamBins::Written);
// The same document's text, json_text(report_json(outcome)), written a test and a stream at a
// time: a checkpoint's memory is one stream's JSON, not the whole document's and its text.
// `summary`: the run's summary (report_json's document without bins); its members the document
// lacks (a run's comparison with its baseline) are written after the document's own, in order.
void write_report_json(const RunOutcome& outcome, std::ostream& out,
                       const nlohmann::ordered_json& summary = nlohmann::ordered_json::object());
// junit.xml: one testcase per stream (link or flow), for burn-in pipelines.
std::string report_junit(const RunOutcome& outcome);
// report.html: one self-contained page drawn from a report.json (report_json's, or an earlier
// run's read back): matrix, time series, BER, suspects and the run's facts. Throws
// std::runtime_error when `report` is not a Tusk report.
std::string report_html(const nlohmann::ordered_json& report);
// The table printed at the end of a run.
// `baseline`: report.json's "baseline" (the comparison with an earlier run), printed before the
// faults as `report --text` prints it; null for none.
std::string summary_table(const RunOutcome& outcome, const nlohmann::ordered_json& baseline = nullptr);

// Writes report.json, junit.xml and report.html into `directory`: report.json and the page from
// `outcome` a test at a time, with what `report` (report_json's, bins left out) adds, its baseline
// (created), each to a temporary file put in place whole, so a reader never sees half a file and a
// failure leaves none. A report is evidence: a file of those names already there is never
// replaced (another run wrote it meanwhile). Throws std::runtime_error naming the file that could
// not be written.
void write_reports(const RunOutcome& outcome, const nlohmann::ordered_json& report, const std::string& directory);

// A checkpoint of a run that goes on (RunOutcome::checkpoint_ns): report.json alone, written as
// it is made (write_report_json) and put in place whole over the run's previous checkpoint; the
// run's final report replaces it in turn. Throws std::runtime_error naming the file.
void write_checkpoint(const RunOutcome& so_far, const std::string& directory);

// Before a run: refuses a `directory` that holds a report already (naming its run), creates it and
// proves a file can be written there, so a report that could not be kept is known before any
// traffic. Throws std::runtime_error naming the path.
void check_report_directory(const std::string& directory);

// Where the reports went when `directory` failed at the end of a run (full disk, removed):
// another directory, or "-" for stdout.
struct ReportFallback {
  std::string error;  // why `directory` failed
  std::string written_to;
};
// Writes the reports into `directory`; else into a new directory of this process's own under
// `fallback_parent` (mkdtemp: never an existing one, nor through a link another user placed;
// skipped when `fallback_parent` is empty); else report.json to `stdout_stream`. Returns nullopt
// when `directory` worked.
std::optional<ReportFallback> write_reports_somewhere(const RunOutcome& outcome, const nlohmann::ordered_json& report,
                                                      const std::string& directory, const std::string& fallback_parent,
                                                      std::ostream& stdout_stream);

}  // namespace tusk
