#include "controller/report/report_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

#include "common/printable.hpp"
#include "common/units.hpp"
#include "controller/report/text_table.hpp"
#include "controller/verdict/verdict.hpp"

namespace tusk {
using json = nlohmann::ordered_json;

namespace {

const json& member(const json& object, const char* name) {
  static const json none;
  if (!object.is_object()) return none;
  const auto it = object.find(name);
  return it == object.end() ? none : *it;
}

// A report's text is a peer's or a file's: shown escaped, as the run's own summary shows it.
std::string text(const json& value) { return value.is_string() ? printable(value.get<std::string>()) : std::string(); }

std::optional<double> number(const json& value) {
  if (!value.is_number()) return std::nullopt;
  return value.get<double>();
}

std::string flow_text(const json& flow) {
  if (!flow.is_object()) return "";
  return fmt::format("{}:{} > {}:{} {}", text(member(flow, "src_address")), member(flow, "src_port").dump(),
                     text(member(flow, "dst_address")), member(flow, "dst_port").dump(), text(member(flow, "protocol")));
}

// A clean stream shows what it proved ("< 9.4e-08 @95%"), not a bare 0.
std::string ber_text(const json& ber) {
  const auto measured = number(member(ber, "measured"));
  const auto upper = number(member(ber, "upper_bound"));
  if (!upper) return "-";
  if (measured && *measured > 0) return units::format_ratio(*measured);
  return fmt::format("< {:.2g} @{:g}%", *upper, number(member(ber, "confidence")).value_or(0) * 100);
}

std::string stream_rows(const json& streams) {
  bool flows = false;
  for (const auto& stream : streams) flows |= member(stream, "flow").is_object();
  std::vector<std::vector<std::string>> rows{{"agent", "stream", "peer", "throughput", "ber", "loss", "verdict"}};
  if (flows) rows.front().insert(rows.front().begin() + 3, "flow");
  for (const auto& stream : streams) {
    const std::string kind = text(member(stream, "kind"));
    std::string result = kind == "tx"                  ? "(sent)"
                         : informational_kind(kind)    ? "(info)"
                         : member(stream, "passed") == true ? "pass"
                                                             : "FAIL";
    for (const auto& check : member(stream, "checks")) {
      if (member(check, "passed") == false) result += " (" + text(member(check, "text")) + ")";
    }
    const json& metrics = member(stream, "metrics");
    const auto throughput = number(member(metrics, "throughput_bps"));
    const auto loss = number(member(metrics, "loss_ratio"));
    rows.push_back({text(member(stream, "agent")), text(member(stream, "stream_id")), text(member(stream, "peer")),
                    throughput ? units::format_bit_rate(*throughput) : "-", ber_text(member(stream, "ber")),
                    loss ? units::format_ratio(*loss) : "-", result});
    if (flows) rows.back().insert(rows.back().begin() + 3, flow_text(member(stream, "flow")));
  }
  return text_table(rows);
}

std::string localisation_lines(const json& found) {
  std::string out;
  if (!found.is_object()) return out;
  const json& suspects = member(found, "suspects");
  for (std::size_t i = 0; i < suspects.size(); ++i) {
    const json& suspect = suspects[i];
    out += fmt::format("  {}: {} ({} confidence): {}\n", i == 0 ? "suspect link" : "also suspect", text(member(suspect, "name")),
                       text(member(suspect, "confidence")), text(member(suspect, "evidence")));
    if (i == 0) {
      for (const auto& step : member(suspect, "next_steps")) out += fmt::format("    next: {}\n", text(step));
    }
  }
  const json& hosts = member(found, "hosts");
  if (suspects.empty() && (hosts.empty() || !member(found, "conclusion").is_null())) {
    if (const std::string conclusion = text(member(found, "conclusion")); !conclusion.empty() && hosts.empty()) {
      out += fmt::format("  localisation: {}\n", conclusion);
    }
  }
  for (const auto& host : hosts) {
    out += fmt::format("  host problem: {}: {}: {}\n", text(member(host, "agent")), text(member(host, "problem")),
                       text(member(host, "evidence")));
    for (const auto& step : member(host, "next_steps")) out += fmt::format("    next: {}\n", text(step));
  }
  return out;
}

}  // namespace

std::string report_text(const json& report) {
  if (!member(report, "run_id").is_string() || !member(report, "tests").is_array()) {
    throw std::runtime_error("not a Tusk report: it has no run_id or no tests");
  }
  std::string out = fmt::format("Tusk run {} — profile '{}'\n", text(report["run_id"]), text(member(member(report, "profile"), "name")));
  out += fmt::format("started {}, finished {}\n", text(member(report, "started")), text(member(report, "finished")));
  for (const auto& test : report["tests"]) {
    out += fmt::format("\ntest {} '{}' ({} engine, {}): {}", member(test, "index").dump(), text(member(test, "name")),
                       text(member(test, "engine")),
                       units::format_duration(std::chrono::milliseconds(
                           static_cast<std::int64_t>(number(member(test, "duration_s")).value_or(0) * 1000))),
                       text(member(test, "verdict")));
    if (const auto skew = number(member(test, "start_skew_ns"))) out += fmt::format(", start skew {:.3f} ms", *skew / 1e6);
    out += "\n";
    out += stream_rows(member(test, "streams"));
    if (const json& method = member(test, "method"); method.is_object()) {
      out += fmt::format("  method {}: {} steps (each step's row: report.html, report.json)\n", text(member(method, "kind")),
                         member(method, "steps").size());
    }
    for (const auto& sign : member(test, "path_faults")) out += fmt::format("  path fault: {}\n", text(member(sign, "text")));
    out += localisation_lines(member(test, "localisation"));
    for (const auto& problem : member(test, "problems")) out += fmt::format("  problem: {}\n", text(problem));
    for (const auto& warning : member(test, "warnings")) out += fmt::format("  warning: {}\n", text(warning));
  }
  const json& faults = member(report, "faults");
  if (!faults.empty()) {
    out += fmt::format("\n{} fault(s) during the run:\n", faults.size());
    for (const auto& fault : faults) out += fmt::format("  {}: {}\n", text(member(fault, "agent")), text(member(fault, "message")));
  }
  if (const json& missing = member(report, "missing_agents"); !missing.empty()) {
    std::vector<std::string> names;
    for (const auto& name : missing) names.push_back(text(name));
    out += fmt::format("\nagents missing: {}\n", fmt::join(names, ", "));
  }
  out += fmt::format("\nresult: {} (exit {})\n", text(member(report, "conclusion")), member(report, "exit_code").dump());
  return out;
}

}  // namespace tusk
