#include "controller/report/report_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

#include "common/json_text.hpp"
#include "common/printable.hpp"
#include "common/units.hpp"
#include "controller/history/baseline_check.hpp"
#include "controller/report/text_table.hpp"
#include "controller/verdict/verdict.hpp"

namespace tusk {
using json = nlohmann::ordered_json;

namespace {

// A report's text is a peer's or a file's: shown escaped, as the run's own summary shows it.
std::string text(const json& value) {
  return value.is_string() ? printable(value.get<std::string>()) : std::string();
}

std::optional<double> number(const json& value) {
  if (!value.is_number()) return std::nullopt;
  return value.get<double>();
}

std::string flow_text(const json& flow) {
  if (!flow.is_object()) return "";
  return fmt::format("{}:{} > {}:{} {}", text(member_or_null(flow, "src_address")),
                     member_or_null(flow, "src_port").dump(), text(member_or_null(flow, "dst_address")),
                     member_or_null(flow, "dst_port").dump(), text(member_or_null(flow, "protocol")));
}

// A clean stream shows what it proved ("< 9.4e-08 @95%"), not a bare 0.
std::string ber_text(const json& ber) {
  const auto measured = number(member_or_null(ber, "measured"));
  const auto upper = number(member_or_null(ber, "upper_bound"));
  if (!upper) return "-";
  if (measured && *measured > 0) return units::format_ratio(*measured);
  return fmt::format("< {:.2g} @{:g}%", *upper, number(member_or_null(ber, "confidence")).value_or(0) * 100);
}

std::string stream_rows(const json& streams) {
  bool flows = false;
  for (const auto& stream : streams) flows |= member_or_null(stream, "flow").is_object();
  std::vector<std::vector<std::string>> rows{{"agent", "stream", "peer", "throughput", "ber", "loss", "verdict"}};
  if (flows) rows.front().insert(rows.front().begin() + 3, "flow");
  for (const auto& stream : streams) {
    const std::string kind = text(member_or_null(stream, "kind"));
    std::string result = kind == "tx"                               ? "(sent)"
                         : informational_kind(kind)                 ? "(info)"
                         : member_or_null(stream, "passed") == true ? "pass"
                                                                    : "FAIL";
    for (const auto& check : member_or_null(stream, "checks")) {
      if (member_or_null(check, "passed") == false) result += " (" + text(member_or_null(check, "text")) + ")";
    }
    const json& metrics = member_or_null(stream, "metrics");
    const auto throughput = number(member_or_null(metrics, "throughput_bps"));
    const auto loss = number(member_or_null(metrics, "loss_ratio"));
    rows.push_back({text(member_or_null(stream, "agent")), text(member_or_null(stream, "stream_id")),
                    text(member_or_null(stream, "peer")), throughput ? units::format_bit_rate(*throughput) : "-",
                    ber_text(member_or_null(stream, "ber")), loss ? units::format_ratio(*loss) : "-", result});
    if (flows) rows.back().insert(rows.back().begin() + 3, flow_text(member_or_null(stream, "flow")));
  }
  return text_table(rows);
}

std::string localisation_lines(const json& found) {
  std::string out;
  if (!found.is_object()) return out;
  const json& suspects = member_or_null(found, "suspects");
  for (std::size_t i = 0; i < suspects.size(); ++i) {
    const json& suspect = suspects[i];
    out += fmt::format("  {}: {} ({} confidence): {}\n", i == 0 ? "suspect link" : "also suspect",
                       text(member_or_null(suspect, "name")), text(member_or_null(suspect, "confidence")),
                       text(member_or_null(suspect, "evidence")));
    if (i == 0) {
      for (const auto& step : member_or_null(suspect, "next_steps")) out += fmt::format("    next: {}\n", text(step));
    }
  }
  const json& hosts = member_or_null(found, "hosts");
  if (suspects.empty() && (hosts.empty() || !member_or_null(found, "conclusion").is_null())) {
    if (const std::string conclusion = text(member_or_null(found, "conclusion"));
        !conclusion.empty() && hosts.empty()) {
      out += fmt::format("  localisation: {}\n", conclusion);
    }
  }
  // Beside suspects or hosts, the conclusion above is not printed: the noise is said on its own.
  if (const json& noise = member_or_null(found, "noise_text");
      noise.is_string() && !(suspects.empty() && hosts.empty())) {
    out += fmt::format("  {}\n", text(noise));
  }
  for (const auto& host : hosts) {
    out += fmt::format("  host problem: {}: {}: {}\n", text(member_or_null(host, "agent")),
                       text(member_or_null(host, "problem")), text(member_or_null(host, "evidence")));
    for (const auto& step : member_or_null(host, "next_steps")) out += fmt::format("    next: {}\n", text(step));
  }
  // Alone, the conclusion above said them; beside suspects or hosts, each is said here.
  if (!suspects.empty() || !hosts.empty()) {
    for (const auto& delay : member_or_null(found, "delays")) {
      out += fmt::format("  adds delay: link {}: {}\n", text(member_or_null(delay, "name")),
                         text(member_or_null(delay, "evidence")));
    }
  }
  return out;
}

}  // namespace

std::string report_text(const json& report) {
  if (!member_or_null(report, "run_id").is_string() || !member_or_null(report, "tests").is_array()) {
    throw std::runtime_error("not a Tusk report: it has no run_id or no tests");
  }
  std::string out = fmt::format("Tusk run {} — profile '{}'\n", text(report["run_id"]),
                                text(member_or_null(member_or_null(report, "profile"), "name")));
  out += fmt::format("started {}, finished {}\n", text(member_or_null(report, "started")),
                     text(member_or_null(report, "finished")));
  if (const std::string retest_of = text(member_or_null(report, "retest_of")); !retest_of.empty()) {
    out += fmt::format("a re-test of run {}'s failures (--only-failing): only what failed there ran\n", retest_of);
  }
  for (const auto& test : report["tests"]) {
    out += fmt::format("\ntest {} '{}' ({} engine, {}): {}", member_or_null(test, "index").dump(),
                       text(member_or_null(test, "name")), text(member_or_null(test, "engine")),
                       units::format_duration(std::chrono::milliseconds(
                           static_cast<std::int64_t>(number(member_or_null(test, "duration_s")).value_or(0) * 1000))),
                       text(member_or_null(test, "verdict")));
    if (const auto skew = number(member_or_null(test, "start_skew_ns")))
      out += fmt::format(", start skew {:.3f} ms", *skew / 1e6);
    out += "\n";
    // A method's streams are summed in its steps' rows (a schedule's may be every pair of a pod).
    if (!member_or_null(test, "method").is_object()) out += stream_rows(member_or_null(test, "streams"));
    if (const json& method = member_or_null(test, "method"); method.is_object()) {
      out += fmt::format("  method {}: {} steps (each step's row: report.html, report.json)\n",
                         text(member_or_null(method, "kind")), member_or_null(method, "steps").size());
    }
    for (const auto& sign : member_or_null(test, "path_faults"))
      out += fmt::format("  path fault: {}\n", text(member_or_null(sign, "text")));
    out += localisation_lines(member_or_null(test, "localisation"));
    if (const json& coverage = member_or_null(test, "coverage"); coverage.is_object()) {
      out += fmt::format("  {}\n", text(member_or_null(coverage, "text")));
    }
    for (const char* evidence : {"switch_counters", "switch_intervals", "optics"}) {
      if (const json& read = member_or_null(test, evidence); read.is_object()) {
        out += fmt::format("  {}\n", text(member_or_null(read, "text")));
        if (const json& timeline = member_or_null(read, "timeline_text"); !timeline.is_null()) {
          out += fmt::format("  {}\n", text(timeline));
        }
      }
    }
    for (const auto& problem : member_or_null(test, "problems")) out += fmt::format("  problem: {}\n", text(problem));
    for (const auto& warning : member_or_null(test, "warnings")) out += fmt::format("  warning: {}\n", text(warning));
  }
  if (const json& cabling = member_or_null(report, "cabling"); cabling.is_object()) {
    out += fmt::format("\n{}\n", text(member_or_null(cabling, "text")));
    for (const auto& finding : member_or_null(cabling, "findings"))
      out += fmt::format("  cabling: {}\n", text(member_or_null(finding, "text")));
  }
  if (const json& baseline = member_or_null(report, "baseline"); baseline.is_object()) {
    out += fmt::format("\n{}", baseline_lines(baseline));
  }
  const json& faults = member_or_null(report, "faults");
  if (!faults.empty()) {
    out += fmt::format("\n{} fault(s) during the run:\n", faults.size());
    for (const auto& fault : faults)
      out += fmt::format("  {}: {}\n", text(member_or_null(fault, "agent")), text(member_or_null(fault, "message")));
  }
  if (const json& missing = member_or_null(report, "missing_agents"); !missing.empty()) {
    std::vector<std::string> names;
    for (const auto& name : missing) names.push_back(text(name));
    out += fmt::format("\nagents missing: {}\n", fmt::join(names, ", "));
  }
  out += fmt::format("\nresult: {} (exit {})\n", text(member_or_null(report, "conclusion")),
                     member_or_null(report, "exit_code").dump());
  return out;
}

}  // namespace tusk
