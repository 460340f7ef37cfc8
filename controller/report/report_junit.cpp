#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/printable.hpp"
#include "common/units.hpp"
#include "controller/method/method_result.hpp"
#include "controller/report/reports.hpp"
#include "controller/verdict/verdict.hpp"

namespace tusk {

namespace {

// The events an agent reported for one stream (or, with an empty id, for none in particular).
std::string event_lines(const TestOutcome& test, const std::string& agent, const std::string& stream_id) {
  std::string text;
  const auto data = test.per_agent.find(agent);
  if (data == test.per_agent.end()) return text;
  for (const auto& event : data->second.events) {
    if (event.stream_id() == stream_id) text += fmt::format("{}: {}\n", agent, event.message());
  }
  return text;
}

std::string system_out(const std::string& text, const char* indent) {
  return text.empty() ? "" : fmt::format("{}<system-out>{}</system-out>\n", indent, xml_text(text));
}

// What a pipeline keys a testcase's history on. A stream with a peer is named as people read it
// (stream_title); one with no peer (a NIC's, a port's) keeps "agent:stream_id", its JUnit name
// before stream_title existed, so those histories do not break.
std::string testcase_name(const StreamVerdict& verdict) {
  // A schedule's steps each number their streams afresh: the step tells them apart.
  const std::string step = verdict.step > 0 ? fmt::format("step {}: ", verdict.step) : "";
  if (verdict.stream.peer().empty()) return fmt::format("{}{}:{}", step, verdict.agent, verdict.stream.stream_id());
  return step + stream_title(verdict);
}

// One test's testcases as written, and what they count.
struct Suite {
  std::string cases;
  std::size_t judged = 0, failures = 0, errors = 0;
};

// A method's steps: one testcase each, failing with the checks its streams failed.
void add_method_cases(const TestOutcome& test, const MethodResult& method, const std::string& classname, Suite& suite) {
  for (std::size_t i = 0; i < method.steps.size(); ++i) {
    const MethodStep& step = method.steps[i];
    ++suite.judged;
    suite.cases +=
        fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\">\n", classname, xml_text(step.label),
                    i < method.step_outcomes.size() ? method.step_outcomes[i].spec.duration.count() / 1e3 : 0.0);
    if (step.verdict != TestVerdict::Pass && i < method.step_outcomes.size()) {
      std::vector<std::string> failed;
      const auto add_failed = [&failed](const StreamVerdict& verdict) {
        for (const auto& check : verdict.checks) {
          if (!check.passed) failed.push_back(fmt::format("{}: {}", stream_title(verdict), check.describe()));
        }
      };
      for (const auto& verdict : method.step_outcomes[i].streams) add_failed(verdict);
      // A schedule's steps gave their streams to the test, each marked with its step.
      for (const auto& verdict : test.streams) {
        if (verdict.step == i + 1) add_failed(verdict);
      }
      ++suite.failures;
      suite.cases += fmt::format(
          "      <failure type=\"step\" message=\"{}\"/>\n",
          xml_text(failed.empty() ? fmt::format("step {}: the test's problems say why", to_string(step.verdict))
                                  : fmt::format("{}", fmt::join(failed, "; "))));
    }
    suite.cases +=
        system_out(fmt::format("offered {} per sender, sent {}, received {}, lost {} ({:.4g}%), CE marked {}\n",
                               units::format_bit_rate(step.offered_bps), step.tx_frames, step.rx_frames,
                               step.lost_frames, step.loss_ratio * 100, step.ce_marked),
                   "      ");
    suite.cases += "    </testcase>\n";
  }
}

// Where the faults are, as one testcase a pipeline's failure list shows: every suspect link named
// (medium or high confidence), the host problems, or why no link could be named.
void add_localisation_case(const Localisation& found, const std::string& classname, Suite& suite) {
  if (found.conclusion.empty()) return;
  ++suite.judged;
  ++suite.failures;
  const LinkSuspect* top = found.top();
  std::vector<std::string> named;
  for (const auto& suspect : found.suspects) {
    if (suspect.confidence == Confidence::Low) break;  // ranked: the named come first
    named.push_back(fmt::format("suspect link {} ({} confidence, {})", suspect.name, to_string(suspect.confidence),
                                to_string(suspect.kind)));
  }
  const std::string message = top ? fmt::format("{}", fmt::join(named, "; ")) : found.conclusion;
  std::string details = found.conclusion + "\n";
  for (const auto& suspect : found.suspects) {
    if (suspect.confidence == Confidence::Low) break;
    details += fmt::format("{}: {}\n", suspect.name, suspect.evidence);
    for (const auto& step : suspect.next_steps) details += "next: " + step + "\n";
  }
  for (const auto& host : found.hosts) {
    details += fmt::format("host {}: {}: {}\n", host.agent, host.problem, host.evidence);
    for (const auto& step : host.next_steps) details += "next: " + step + "\n";
  }
  suite.cases += fmt::format("    <testcase classname=\"{}\" name=\"localisation\" time=\"0\">\n", classname);
  suite.cases += fmt::format("      <failure type=\"{}\" message=\"{}\"/>\n", top ? "suspect_link" : "localisation",
                             xml_text(message));
  suite.cases += system_out(details, "      ");
  suite.cases += "    </testcase>\n";
}

}  // namespace

std::string report_junit(const RunOutcome& outcome) {
  std::size_t total = 0, failures = 0, errors = 0;
  std::string suites;
  for (const auto& test : outcome.tests) {
    Suite suite;
    const double seconds = test.spec.duration.count() / 1e3;
    const std::string classname = xml_text(outcome.profile.name + "." + test.spec.name);
    for (const auto& verdict : test.streams) {
      if (informational_kind(verdict.stream.kind())) continue;  // the receiver's stream is the testcase
      ++suite.judged;
      suite.cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\">\n", classname,
                                 xml_text(testcase_name(verdict)), seconds);
      // A testcase counts once however many of its checks failed: `failures` is of testcases.
      bool failed = false;
      for (const auto& check : verdict.checks) {
        if (check.passed) continue;
        failed = true;
        suite.cases += fmt::format("      <failure type=\"{}\" message=\"{}\"/>\n", xml_text(check.threshold.key),
                                   xml_text(check.describe()));
      }
      if (failed) ++suite.failures;
      std::string out;
      for (const auto& warning : verdict.warnings()) out += "warning: " + warning + "\n";
      out += event_lines(test, verdict.agent, verdict.stream.stream_id());
      suite.cases += system_out(out, "      ");
      suite.cases += "    </testcase>\n";
    }
    if (test.method) add_method_cases(test, *test.method, classname, suite);
    // Agents that produced no streams (lost, refused, no result) still get a testcase: a burn-in
    // pipeline must see them as errors, not as absent.
    for (const auto& problem : test.problems) {
      ++suite.errors;
      suite.cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n", classname,
                                 xml_text("run: " + problem));
      suite.cases += fmt::format("      <error message=\"{}\"/>\n    </testcase>\n", xml_text(problem));
    }
    add_localisation_case(test.localisation, classname, suite);
    // The test's own warnings and the events that belong to no judged stream.
    std::string out;
    for (const auto& sign : test.path_faults) out += "path fault: " + sign.text(test.streams) + "\n";
    for (const auto& warning : test.warnings) out += "warning: " + warning + "\n";
    for (const auto& name : test.agents) {
      const auto data = test.per_agent.find(name);
      if (data == test.per_agent.end()) continue;
      for (const auto& event : data->second.events) {
        const bool in_a_case = std::any_of(test.streams.begin(), test.streams.end(), [&](const StreamVerdict& v) {
          return v.agent == name && v.stream.stream_id() == event.stream_id() && !informational_kind(v.stream.kind());
        });
        if (!in_a_case) out += fmt::format("{}: {}\n", name, event.message());
      }
    }
    suite.cases += system_out(out, "    ");
    const std::size_t suite_tests = suite.judged + test.problems.size();
    total += suite_tests;
    failures += suite.failures;
    errors += suite.errors;
    suites += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n{}  </testsuite>\n",
        classname, suite_tests, suite.failures, suite.errors, seconds, suite.cases);
  }
  if (outcome.tests.empty() && !outcome.conclusion.empty() && outcome.exit_code != kExitPass) {
    ++total;
    ++errors;
    suites += fmt::format(
        "  <testsuite name=\"{}\" tests=\"1\" failures=\"0\" errors=\"1\">\n"
        "    <testcase classname=\"{}\" name=\"run\" time=\"0\">\n"
        "      <error message=\"{}\"/>\n    </testcase>\n  </testsuite>\n",
        xml_text(outcome.profile.name), xml_text(outcome.profile.name), xml_text(outcome.conclusion));
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n{}</testsuites>\n",
      xml_text(outcome.profile.name), total, failures, errors, suites);
}

}  // namespace tusk
