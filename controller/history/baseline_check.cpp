#include "controller/history/baseline_check.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "common/json_text.hpp"
#include "common/printable.hpp"
#include "controller/history/history_rows.hpp"
#include "controller/history/run_comparison.hpp"
#include "controller/history/run_history.hpp"

namespace tusk {
namespace {

// Regressions listed in report.json; a run that got worse everywhere says how many more.
constexpr std::size_t kMaxBaselineRegressions = 1000;
constexpr std::size_t kMaxBaselineWarnings = 20;

BaselineCheck not_compared(const std::string& baseline, const std::string& why) {
  BaselineCheck check;
  check.json = {{"baseline", baseline}, {"run_id", nullptr}, {"error", why}};
  check.warnings.push_back(fmt::format("baseline {}: not compared: {}", baseline, why));
  return check;
}

}  // namespace

BaselineCheck check_against_baseline(const std::string& baseline, const nlohmann::ordered_json& report,
                                     const std::string& history_path) {
  RunRows after;
  try {
    after = rows_of_report(report, "");
  } catch (const std::exception& e) {
    return not_compared(baseline, e.what());
  }
  std::optional<RunRows> before;
  try {
    if (!history_exists(history_path)) {
      return not_compared(baseline, fmt::format("no history at {}", history_path));
    }
    const RunHistory history(history_path);
    std::string run_id = baseline;
    if (baseline == "last") {
      run_id.clear();
      RunFilter same_profile;
      same_profile.profile = after.run.profile_name;
      for (const RunRow& run : history.list_runs(same_profile)) {
        if (run.run_id != after.run.run_id) run_id = run.run_id;  // oldest first: the newest wins
      }
      if (run_id.empty()) {
        return not_compared(baseline,
                            fmt::format("no earlier run of profile '{}' in {}", after.run.profile_name, history_path));
      }
    }
    before = history.load_run(run_id);
    if (!before) return not_compared(baseline, fmt::format("no run {} in {}", run_id, history_path));
  } catch (const std::exception& e) {
    return not_compared(baseline, e.what());
  }
  const Comparison comparison = compare_runs(*before, after);
  BaselineCheck check;
  nlohmann::ordered_json regressions = nlohmann::ordered_json::array();
  for (const Regression& regression : comparison.regressions) {
    if (regressions.size() == kMaxBaselineRegressions) break;
    regressions.push_back({{"subject", regression.subject()},
                           {"metric", regression.metric},
                           {"before", regression.before ? nlohmann::ordered_json(*regression.before) : nullptr},
                           {"after", regression.after ? nlohmann::ordered_json(*regression.after) : nullptr},
                           {"text", regression.text}});
  }
  check.json = {{"baseline", baseline},
                {"run_id", before->run.run_id},
                {"compared_streams", comparison.compared_streams},
                {"regression_count", comparison.regressions.size()},
                {"regressions", std::move(regressions)}};
  for (const Regression& regression : comparison.regressions) {
    if (check.warnings.size() == kMaxBaselineWarnings) {
      check.warnings.push_back(fmt::format("baseline {}: {} more regressions (report.json baseline)",
                                           before->run.run_id, comparison.regressions.size() - kMaxBaselineWarnings));
      break;
    }
    check.warnings.push_back(
        fmt::format("worse than baseline {}: {}: {}", before->run.run_id, regression.subject(), regression.text));
  }
  if (comparison.compared_streams == 0) {
    check.warnings.push_back(fmt::format("baseline {}: no stream in common with this run", before->run.run_id));
  }
  return check;
}

std::string baseline_headline(const nlohmann::ordered_json& baseline) {
  if (!baseline.is_object()) return "";
  const std::string run_id = string_member(baseline, "run_id");
  if (run_id.empty()) {
    return fmt::format("baseline {}: not compared: {}", string_member(baseline, "baseline"),
                       string_member(baseline, "error"));
  }
  const auto count_of = [&](const char* key) {
    const auto& value = member_or_null(baseline, key);
    return value.is_number_unsigned() ? value.get<std::uint64_t>() : 0;
  };
  const std::uint64_t regressions = count_of("regression_count");
  return fmt::format("against baseline {}: {} over {} streams compared", run_id,
                     regressions == 0 ? std::string("nothing got worse")
                                      : fmt::format("{} regression{}", regressions, regressions == 1 ? "" : "s"),
                     count_of("compared_streams"));
}

std::string baseline_lines(const nlohmann::ordered_json& baseline) {
  if (!baseline.is_object()) return "";
  std::string out = baseline_headline(baseline) + "\n";
  for (const auto& regression : member_or_null(baseline, "regressions")) {
    out += fmt::format("  worse: {}: {}\n", printable(string_member(regression, "subject")),
                       printable(string_member(regression, "text")));
  }
  return out;
}

}  // namespace tusk
