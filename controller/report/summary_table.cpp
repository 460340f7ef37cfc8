#include <fmt/format.h>

#include <algorithm>

#include "common/units.hpp"
#include "controller/engines/engine_slice.hpp"
#include "controller/history/baseline_check.hpp"
#include "controller/method/method_report.hpp"
#include "controller/report/reports.hpp"
#include "controller/report/text_table.hpp"
#include "controller/verdict/ber_bound.hpp"

namespace tusk {

namespace {

std::string metric_text(const StreamVerdict& verdict, const std::string& name) {
  auto it = verdict.metrics.find(name);
  if (it == verdict.metrics.end()) return "-";
  if (name == "throughput_bps") return units::format_bit_rate(it->second);
  if (name == "ber" || name == "loss_ratio") return units::format_ratio(it->second);
  return fmt::format("{:.0f}", it->second);
}

// A clean stream shows what it proved ("< 9.4e-08 @95%"), not a bare 0.
std::string ber_text(const StreamVerdict& verdict) {
  if (!verdict.ber || !verdict.ber->estimate.has_data()) return "-";
  const BerEstimate& estimate = verdict.ber->estimate;
  if (estimate.measured > 0) return units::format_ratio(estimate.measured);
  return fmt::format("< {:.2g} @{:g}%", estimate.upper_bound, estimate.confidence * 100);
}

// What passed but must be seen: the test's warnings, faults within relaxed thresholds, then the
// agents' events (a flap, a stall, a late connection), at most kMaxEventLines of those.
std::vector<std::string> warning_lines(const TestOutcome& test) {
  constexpr std::size_t kMaxEventLines = 20;
  std::vector<std::string> lines = reader_warnings(test);
  std::size_t events = 0, shown = 0;
  for (const auto& name : test.agents) {
    for (const auto& event : test.per_agent.at(name).events) {
      if (++events > kMaxEventLines) continue;
      ++shown;
      lines.push_back(fmt::format("{}: {}", name, event.message()));
    }
  }
  if (events > shown) lines.push_back(fmt::format("... and {} more events in report.json", events - shown));
  return lines;
}

// Every suspect, the named ones with what to check next, the host problems, or why no link is named.
std::string localisation_lines(const Localisation& found) {
  std::string out;
  if (found.conclusion.empty()) return out;
  if (const LinkSuspect* top = found.top()) {
    out +=
        fmt::format("  suspect link: {} ({} confidence): {}\n", top->name, to_string(top->confidence), top->evidence);
    for (const auto& step : top->next_steps) out += fmt::format("    next: {}\n", step);
    for (std::size_t i = 1; i < found.suspects.size(); ++i) {
      const auto& other = found.suspects[i];
      out += fmt::format("  also suspect: {} ({} confidence): {}\n", other.name, to_string(other.confidence),
                         other.evidence);
      if (other.confidence == Confidence::Low) continue;
      for (const auto& step : other.next_steps) out += fmt::format("    next: {}\n", step);
    }
  } else if (found.hosts.empty() || !found.suspects.empty()) {
    out += fmt::format("  localisation: {}\n", found.conclusion);
  }
  for (const auto& host : found.hosts) {
    out += fmt::format("  host problem: {}: {}: {}\n", host.agent, host.problem, host.evidence);
    for (const auto& step : host.next_steps) out += fmt::format("    next: {}\n", step);
  }
  // Alone, the conclusion above said them; beside a suspect or a host, each is said here.
  if (found.top() || !found.hosts.empty()) {
    for (const auto& delay : found.delays)
      out += fmt::format("  adds delay: link {}: {}\n", delay.name, delay.evidence);
  }
  return out;
}

}  // namespace

std::string summary_table(const RunOutcome& outcome, const nlohmann::ordered_json& baseline) {
  std::string out = fmt::format("Tusk run {} — profile '{}'\n", outcome.run_id, outcome.profile.name);
  if (!outcome.retest_of.empty()) {
    out +=
        fmt::format("a re-test of run {}'s failures (--only-failing): only what failed there ran\n", outcome.retest_of);
  }
  for (const auto& test : outcome.tests) {
    out += fmt::format("\ntest {} '{}' ({} engine, {}): {}", test.index, test.spec.name, test.spec.engine,
                       units::format_duration(test.spec.duration), to_string(test.verdict));
    if (test.start_skew_ns) out += fmt::format(", start skew {:.3f} ms", *test.start_skew_ns / 1e6);
    out += "\n";
    // Routed flows show their 5-tuple: which flows failed is which paths did.
    const bool flows = std::any_of(test.streams.begin(), test.streams.end(),
                                   [](const StreamVerdict& v) { return v.stream.has_flow(); });
    std::vector<std::vector<std::string>> rows{{"agent", "stream", "peer", "throughput", "ber", "loss", "verdict"}};
    if (flows) rows.front().insert(rows.front().begin() + 3, "flow");
    // A method test's streams are its steps', summed in its step rows below.
    static const std::vector<StreamVerdict> none;
    for (const auto& verdict : test.method ? none : test.streams) {
      std::string result = verdict.stream.kind() == "tx"               ? "(sent)"
                           : informational_kind(verdict.stream.kind()) ? "(info)"
                           : verdict.passed()                          ? "pass"
                                                                       : "FAIL";
      for (const auto& check : verdict.checks) {
        if (!check.passed) result += " (" + check.describe() + ")";
      }
      rows.push_back({verdict.agent, verdict.stream.stream_id(), verdict.stream.peer(),
                      metric_text(verdict, "throughput_bps"), ber_text(verdict), metric_text(verdict, "loss_ratio"),
                      result});
      if (flows) rows.back().insert(rows.back().begin() + 3, flow_text(verdict.stream));
    }
    out += text_table(rows);
    if (const EngineSlice* engine = find_engine(test.spec.engine); engine && engine->summary_extra) {
      out += engine->summary_extra(test);
    }
    if (test.method) {
      out += fmt::format("  method {}: {} steps{}\n", to_string(test.method->kind), test.method->steps.size(),
                         test.method->complete ? "" : " (stopped early)");
      out += text_table(method_step_rows(*test.method));
      if (const auto sizes = method_throughput_rows(*test.method); !sizes.empty()) out += text_table(sizes);
    }
    for (const auto& sign : test.path_faults) out += fmt::format("  path fault: {}\n", sign.text(test.streams));
    out += localisation_lines(test.localisation);
    if (test.coverage) out += fmt::format("  {}\n", test.coverage->text());
    if (!test.switch_counters.empty()) out += fmt::format("  {}\n", test.switch_counters.text());
    if (!test.switch_intervals.empty()) out += fmt::format("  {}\n", switch_intervals_text(test.switch_intervals));
    if (!test.optics.empty()) out += fmt::format("  {}\n", optics_summary_text(test.optics));
    if (!test.optics_timeline.empty()) out += fmt::format("  {}\n", optics_timeline_summary(test.optics_timeline));
    for (const auto& problem : test.problems) out += fmt::format("  problem: {}\n", problem);
    for (const auto& line : warning_lines(test)) out += fmt::format("  warning: {}\n", line);
  }
  if (outcome.cabling) {
    out += fmt::format("\n{}\n", outcome.cabling->text());
    for (const auto& finding : outcome.cabling->findings) out += fmt::format("  cabling: {}\n", finding.text());
  }
  if (baseline.is_object()) out += fmt::format("\n{}", baseline_lines(baseline));
  if (!outcome.faults.empty()) {
    out += fmt::format("\n{} fault(s) during the run:\n", outcome.faults.size());
    for (const auto& fault : outcome.faults) out += fmt::format("  {}: {}\n", fault.agent, fault.message);
  }
  out += fmt::format("\nresult: {} (exit {})\n", outcome.conclusion, outcome.exit_code);
  return out;
}

}  // namespace tusk
