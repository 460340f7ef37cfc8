// The rows run history keeps of one run, read from its report.json: the run, one row per test and
// stream, and the links localisation named. History is a view of the report like every other
// format, so these are read from the report document (report_json's output, or a file an earlier
// run left), never from a RunOutcome: a run imported later reads exactly as one recorded live.
// Pure functions; any thread may call them.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tusk {

// A report that cannot be read as history: the message names the field, as
// "tests[0].streams[2].passed: expected a boolean, found a string".
class ReportUnreadable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RunRow {
  std::string run_id;
  std::string profile_name;
  std::string profile_file;
  std::optional<std::int64_t> started_ns;  // nullopt: the report's time could not be read as UTC
  std::optional<std::int64_t> finished_ns;
  int exit_code = 0;
  std::string conclusion;
  std::vector<std::string> agents;  // those that took part and those that never came
  std::string run_directory;        // where its report.json was (or was read from)
  std::string tusk_version;
  std::string retest_of;  // the run whose failures this one tested again (run --only-failing); "" if none
};

// One stream of one test. The numbers are those the report shows; nullopt where the stream does not
// report one (a sender has no loss, a DPDK stream no retransmits).
struct StreamRow {
  std::string test;
  std::string engine;
  std::string agent;
  std::string stream_id;
  std::string peer;
  std::string flow;  // the 5-tuple's text on a routed test, else ""
  std::string link;  // "sender->receiver" of the hosts its traffic went between, else "" (a port's counters)
  bool passed = false;
  std::optional<double> throughput_bps;
  std::optional<double> loss_ratio;  // lost over sent, as the verdict worked it out (or lost / (lost + received))
  std::optional<double> lost_frames;
  std::optional<double> bit_errors;
  std::optional<double> bits_compared;
  std::optional<double> ber_upper_bound;  // the bound at the report's confidence, not the measured ratio
  std::optional<double> retransmits;
  std::optional<double> latency_p99_ns;
  std::optional<double> completion_errors;
};

// A link that carried a routed test's flows, with what localisation made of it.
struct LinkRow {
  std::string test;
  std::string key;         // the link and its direction, as the report's localisation names it
  std::string name;        // with its cable, when the topology names one; else the key
  std::string role;        // "suspect" (localisation ranked it) or "crossed" (flows went through it)
  std::string confidence;  // a suspect's: "low", "medium", "high"; "" for a link only crossed
  double votes = 0;
  std::string kind;            // a suspect's fault: "loss", "corruption", "failure", ...; "" if only crossed
  std::optional<double> rate;  // its estimated rate (loss or error share); nullopt where none
  int flows = 0;               // flows whose traced path crossed it
  int failing_flows = 0;       // of those, the ones that failed
};

struct RunRows {
  RunRow run;
  std::vector<StreamRow> streams;
  std::vector<LinkRow> links;
};

// The report schemas the history reads: /2 carries each stream's series in bins where /1 had every
// sample; the history reads neither.
inline constexpr std::string_view kHistoryReportSchemas[] = {"tusk.report/1", "tusk.report/2"};

// Reads the rows of one run from its report.json document. Every value is type-checked: a report
// that is malformed, or of a schema this build does not know, throws ReportUnreadable naming the
// field. `run_directory` is kept as the run's directory.
RunRows rows_of_report(const nlohmann::ordered_json& report, std::string_view run_directory);

// Reads and parses a report.json file, or the one in a run directory. Throws ReportUnreadable naming
// the path when it cannot be read or is not JSON.
nlohmann::ordered_json read_report_file(const std::string& path_or_directory, std::string* directory = nullptr);

// "2026-11-24T20:19:50.040Z" as nanoseconds since the epoch; nullopt for anything else. The
// reverse is utc_iso_time (common/clock.hpp).
std::optional<std::int64_t> parse_report_time(std::string_view text);

// A stored count as the history commands print it: whole ("1234").
std::string stored_count_text(double count);
// A stored latency in nanoseconds as the history commands print it: a duration ("1.25 us").
std::string stored_latency_text(double ns);

}  // namespace tusk
