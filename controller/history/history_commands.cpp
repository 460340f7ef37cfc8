#include "controller/history/history_commands.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "common/clock.hpp"
#include "common/exit_codes.hpp"
#include "common/json_text.hpp"
#include "common/units.hpp"
#include "controller/history/history_queue.hpp"
#include "controller/history/history_table.hpp"
#include "controller/history/run_history.hpp"

namespace tusk {
using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

std::string time_text(const std::optional<std::int64_t>& ns) {
  return ns ? utc_iso_time(*ns) : "-";
}

// The exit code with what it means, as `run` documents it.
std::string exit_text(int code) {
  switch (code) {
    case kExitPass:
      return "0 pass";
    case kExitThresholdFailed:
      return "1 fail";
    case kExitUsage:
      return "2 error";
    case kExitAgentsMissing:
      return "3 agents missing";
    case kExitReportElsewhere:
      return "4 report elsewhere";
    default:
      return std::to_string(code);
  }
}

std::string optional_text(const std::optional<double>& value, std::string (*format)(double)) {
  return value ? format(*value) : "-";
}
std::string ratio_text(double value) {
  return units::format_ratio(value);
}
std::string rate_text(double value) {
  return units::format_bit_rate(value);
}

json optional_json(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

json run_json(const RunRow& run) {
  return {{"run_id", run.run_id},
          {"profile", run.profile_name},
          {"profile_file", run.profile_file},
          {"started", run.started_ns ? json(utc_iso_time(*run.started_ns)) : json(nullptr)},
          {"finished", run.finished_ns ? json(utc_iso_time(*run.finished_ns)) : json(nullptr)},
          {"exit_code", run.exit_code},
          {"conclusion", run.conclusion},
          {"agents", run.agents},
          {"run_directory", run.run_directory},
          {"tusk_version", run.tusk_version},
          {"retest_of", run.retest_of.empty() ? json(nullptr) : json(run.retest_of)}};
}

json stream_json(const StreamRow& stream) {
  return {{"test", stream.test},
          {"engine", stream.engine},
          {"agent", stream.agent},
          {"stream_id", stream.stream_id},
          {"peer", stream.peer},
          {"flow", stream.flow},
          {"link", stream.link},
          {"passed", stream.passed},
          {"throughput_bps", optional_json(stream.throughput_bps)},
          {"loss_ratio", optional_json(stream.loss_ratio)},
          {"lost_frames", optional_json(stream.lost_frames)},
          {"bit_errors", optional_json(stream.bit_errors)},
          {"bits_compared", optional_json(stream.bits_compared)},
          {"ber_upper_bound", optional_json(stream.ber_upper_bound)},
          {"retransmits", optional_json(stream.retransmits)},
          {"latency_p99_ns", optional_json(stream.latency_p99_ns)},
          {"completion_errors", optional_json(stream.completion_errors)}};
}

json link_json(const LinkRow& link) {
  return {{"test", link.test},
          {"link", link.key},
          {"name", link.name},
          {"role", link.role},
          {"confidence", link.confidence},
          {"votes", link.votes},
          {"flows", link.flows},
          {"failing_flows", link.failing_flows}};
}

std::string runs_table(const std::vector<RunRow>& runs) {
  std::vector<std::vector<std::string>> rows{{"RUN", "STARTED", "PROFILE", "EXIT", "CONCLUSION"}};
  for (const auto& run : runs) {
    rows.push_back(
        {run.run_id, time_text(run.started_ns), run.profile_name, exit_text(run.exit_code),
         run.retest_of.empty() ? run.conclusion : fmt::format("re-test of {}: {}", run.retest_of, run.conclusion)});
  }
  return table_text(rows);
}

std::string stream_trend_table(const std::vector<StreamTrendRow>& trend) {
  std::vector<std::vector<std::string>> rows{{"RUN", "STARTED", "TEST", "AGENT", "STREAM", "LINK", "VERDICT",
                                              "THROUGHPUT", "LOSS", "BIT ERRORS", "BER BOUND", "RETRANSMITS", "P99"}};
  for (const auto& [run, stream] : trend) {
    rows.push_back({run.run_id, time_text(run.started_ns), stream.test, stream.agent, stream.stream_id,
                    stream.link.empty() ? "-" : stream.link, stream.passed ? "pass" : "FAIL",
                    optional_text(stream.throughput_bps, rate_text), optional_text(stream.loss_ratio, ratio_text),
                    optional_text(stream.bit_errors, stored_count_text),
                    optional_text(stream.ber_upper_bound, ratio_text),
                    optional_text(stream.retransmits, stored_count_text),
                    optional_text(stream.latency_p99_ns, stored_latency_text)});
  }
  return table_text(rows);
}

std::string link_trend_table(const std::vector<LinkTrendRow>& trend) {
  std::vector<std::vector<std::string>> rows{{"RUN", "STARTED", "TEST", "LINK", "ROLE", "CONFIDENCE", "FAILING FLOWS"}};
  for (const auto& [run, link] : trend) {
    rows.push_back({run.run_id, time_text(run.started_ns), link.test, link.name, link.role,
                    link.confidence.empty() ? "-" : link.confidence,
                    fmt::format("{} of {}", link.failing_flows, link.flows)});
  }
  return table_text(rows);
}

// A run named on the command line: a run directory or report.json read directly, else a run id in
// the history. Throws std::runtime_error saying which it tried.
RunRows resolve_run(const std::string& given, const std::string& history_path) {
  std::error_code error;
  if (fs::exists(given, error)) {
    std::string directory;
    const json report = read_report_file(given, &directory);
    try {
      return rows_of_report(report, directory);
    } catch (const ReportUnreadable& e) {
      throw ReportUnreadable(fmt::format("{}: {}", given, e.what()));
    }
  }
  if (!history_exists(history_path)) {
    throw std::runtime_error(
        fmt::format("{}: no such run directory or report.json, and no history at {}", given, history_path));
  }
  const RunHistory store(history_path);
  auto rows = store.load_run(given);
  if (!rows) {
    throw std::runtime_error(
        fmt::format("{}: no such run in {} (nor a run directory or report.json)", given, history_path));
  }
  return std::move(*rows);
}

std::string run_line(const RunRow& run) {
  return fmt::format("{} ({}, {}, exit {})", run.run_id, run.profile_name, time_text(run.started_ns),
                     exit_text(run.exit_code));
}

// Two runs that share no stream (both measured nothing, or different tests) say nothing of each
// other: neither a pass nor worse (every earlier stream "missing" would read as a regression).
bool nothing_compared(const Comparison& comparison) {
  return comparison.compared_streams == 0;
}

std::string comparison_text(const RunRows& before, const RunRows& after, const Comparison& comparison) {
  std::string text = fmt::format("before: {}\nafter:  {}\n", run_line(before.run), run_line(after.run));
  if (before.run.profile_name != after.run.profile_name) {
    text += fmt::format("note: different profiles ('{}' and '{}'): only streams of the same test and agent compare\n",
                        before.run.profile_name, after.run.profile_name);
  }
  if (nothing_compared(comparison)) {
    text += fmt::format(
        "nothing compared: no stream of the same test, agent, stream id and peer is in both runs "
        "(before: {} stream(s), after: {}); neither better nor worse\n",
        before.streams.size(), after.streams.size());
  } else if (!comparison.worse()) {
    text += fmt::format("nothing got worse: {} stream(s) compared\n", comparison.compared_streams);
  } else {
    // Grouped by what got worse, in the order the regressions came.
    std::vector<std::string> subjects;
    for (const auto& regression : comparison.regressions) {
      if (std::find(subjects.begin(), subjects.end(), regression.subject()) == subjects.end()) {
        subjects.push_back(regression.subject());
      }
    }
    text += fmt::format("WORSE: {} stream(s) or link(s) ({} stream(s) compared)\n", subjects.size(),
                        comparison.compared_streams);
    for (const auto& subject : subjects) {
      text += fmt::format("  {}\n", subject);
      for (const auto& regression : comparison.regressions) {
        if (regression.subject() == subject) text += fmt::format("    {}\n", regression.text);
      }
    }
  }
  if (!comparison.new_streams.empty()) {
    text += fmt::format("only in the later run ({}): {}\n", comparison.new_streams.size(),
                        fmt::join(comparison.new_streams, ", "));
  }
  return text;
}

json comparison_json(const RunRows& before, const RunRows& after, const Comparison& comparison,
                     const WorseThresholds& thresholds) {
  json regressions = json::array();
  for (const auto& regression : comparison.regressions) {
    regressions.push_back({{"subject", regression.subject()},
                           {"test", regression.test},
                           {"agent", regression.agent},
                           {"stream_id", regression.stream_id},
                           {"peer", regression.peer},
                           {"link", regression.link},
                           {"flow", regression.flow},
                           {"metric", regression.metric},
                           {"before", optional_json(regression.before)},
                           {"after", optional_json(regression.after)},
                           {"text", regression.text}});
  }
  return {{"before", run_json(before.run)},
          {"after", run_json(after.run)},
          {"worse", comparison.worse() && !nothing_compared(comparison)},
          {"nothing_compared", nothing_compared(comparison)},
          {"compared_streams", comparison.compared_streams},
          {"regressions", regressions},
          {"new_streams", comparison.new_streams},
          {"thresholds",
           {{"ber_bound_factor", thresholds.ber_bound_factor},
            {"loss_ratio_absolute", thresholds.loss_ratio_absolute},
            {"loss_ratio_factor", thresholds.loss_ratio_factor},
            {"retransmits_factor", thresholds.retransmits_factor},
            {"retransmits_absolute", thresholds.retransmits_absolute},
            {"throughput_drop", thresholds.throughput_drop},
            {"latency_p99_rise", thresholds.latency_p99_rise}}}};
}

}  // namespace

std::string run_location(const std::string& given, const std::string& history_path) {
  std::error_code error;
  if (fs::exists(given, error)) return given;
  const std::string path = history_path.empty() ? default_history_path() : history_path;
  if (!history_exists(path)) {
    throw std::runtime_error(
        fmt::format("{}: no such run directory or file, and no history at {} to look a run id up in", given, path));
  }
  const RunHistory store(path);
  const auto rows = store.load_run(given);
  if (!rows) throw std::runtime_error(fmt::format("{}: no such run directory or file, nor a run in {}", given, path));
  const std::string& directory = rows->run.run_directory;
  if (directory.empty() || !fs::exists(directory, error)) {
    throw std::runtime_error(fmt::format("run {}: recorded in {} from {}, which is no longer there", given, path,
                                         directory.empty() ? std::string("no directory") : directory));
  }
  return directory;
}

void RunHistoryFlags::add_to(CLI::App& run) {
  auto* file = run.add_option(
      "--history", path,
      "record the run in this history: an SQLite file, or a PostgreSQL database (postgresql://..., service=NAME) "
      "(default: " +
          default_history_path() + ")");
  run.add_flag("--no-history", disabled, "do not record the run in the history")->excludes(file);
}

void record_in_history(const json& report, const std::string& run_directory, const RunHistoryFlags& flags) {
  if (flags.disabled) return;
  const std::string path = flags.path.empty() ? default_history_path() : flags.path;
  std::error_code error;
  const fs::path absolute = fs::absolute(run_directory, error);
  const std::string directory = run_directory == "-" || error ? run_directory : absolute.lexically_normal().string();
  record_or_queue(report, directory, path);
}

HistoryCommands::HistoryCommands(CLI::App& app) {
  const std::string path_help =
      "the history: an SQLite file, or a PostgreSQL database (postgresql://..., service=NAME) (default: " +
      default_history_path() + ")";
  history_ = app.add_subcommand("history", "list recorded runs, or follow one link or stream across them");
  history_->add_option("--history", history_path_, path_help);
  history_->add_option("--profile", profile_, "only runs of this profile (its name)");
  history_->add_option("--agent", agent_, "only runs this agent took part in");
  history_->add_option("--link", link_,
                       "one link or stream across runs: hosts ('lab-a->lab-b'), a stream id ('rx:lab-a/1'), "
                       "agent:stream id, a flow's 5-tuple, or a fabric link's name");
  history_->add_option("--last", last_, "only the newest N runs");
  history_->add_option("--import", imports_, "record earlier runs: their run directories or report.json files");
  history_->add_flag("--json", as_json_, "machine-readable output");

  compare_ = app.add_subcommand("compare",
                                "whether RUN_B is worse than RUN_A, stream by stream; exit 1 when something got worse, "
                                "2 when the runs share no stream (nothing compared)");
  compare_->add_option("run_a", run_before_, "the earlier run: a run id in the history, a run directory or report.json")
      ->required();
  compare_->add_option("run_b", run_after_, "the later run, the same ways")->required();
  compare_->add_option("--history", history_path_, path_help);
  compare_->add_flag("--json", as_json_, "machine-readable output");
  compare_
      ->add_option("--ber-factor", thresholds_.ber_bound_factor,
                   "worse: the BER upper bound rose this many times, with bit errors")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  compare_
      ->add_option("--loss-increase", thresholds_.loss_ratio_absolute,
                   "worse: the loss ratio rose by more than this ...")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  compare_->add_option("--loss-factor", thresholds_.loss_ratio_factor, "... and to more than this many times")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  compare_
      ->add_option("--retransmits-factor", thresholds_.retransmits_factor,
                   "worse: retransmits grew this many times ...")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  compare_->add_option("--retransmits-increase", thresholds_.retransmits_absolute, "... and by at least this many")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  compare_->add_option("--throughput-drop", throughput_drop_percent_, "worse: throughput fell by this many percent")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  compare_->add_option("--latency-rise", latency_rise_percent_, "worse: the p99 latency rose by this many percent")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

std::string HistoryCommands::history_path() const {
  return history_path_.empty() ? default_history_path() : history_path_;
}

std::optional<int> HistoryCommands::run_chosen(std::ostream& out, std::ostream& err) const {
  if (*history_) return history(out, err);
  if (*compare_) return compare(out, err);
  return std::nullopt;
}

int HistoryCommands::history(std::ostream& out, std::ostream& err) const {
  const std::string path = history_path();
  try {
    if (!imports_.empty()) {
      RunHistory store(path);
      for (const auto& given : imports_) {
        std::string directory;
        const json report = read_report_file(given, &directory);
        try {
          store.record_run(report, directory);
        } catch (const ReportUnreadable& e) {
          throw ReportUnreadable(fmt::format("{}: {}", given, e.what()));
        }
        const std::string queued_since = clear_queued(directory);
        out << fmt::format("recorded run {} from {} in {}{}\n", report.value("run_id", ""), given, store.path(),
                           queued_since.empty() ? "" : fmt::format(" (queued there since {})", queued_since));
      }
      return kExitPass;
    }
    if (!history_exists(path)) {
      if (!link_.empty()) {
        err << fmt::format("no history at {}: nothing recorded of '{}'\n", path, link_);
        return kExitUsage;
      }
      if (as_json_) {
        out << json_text(json{{"history", path}, {"runs", json::array()}}) << "\n";
      } else {
        out << fmt::format("no history at {} yet: `tusk-controller run` records each run there\n", path);
      }
      return kExitPass;
    }
    const RunHistory store(path);
    const RunFilter filter{profile_, agent_, last_};
    if (link_.empty()) {
      const auto runs = store.list_runs(filter);
      if (as_json_) {
        json list = json::array();
        for (const auto& run : runs) list.push_back(run_json(run));
        out << json_text(json{{"history", path}, {"runs", list}}) << "\n";
      } else {
        out << fmt::format("{} run(s) in {}\n", runs.size(), path);
        if (!runs.empty()) out << runs_table(runs);
      }
      return kExitPass;
    }
    const auto streams = store.stream_trend(link_, filter);
    const auto links = store.link_trend(link_, filter);
    if (as_json_) {
      json stream_list = json::array();
      for (const auto& [run, stream] : streams)
        stream_list.push_back({{"run", run_json(run)}, {"stream", stream_json(stream)}});
      json link_list = json::array();
      for (const auto& [run, link] : links) link_list.push_back({{"run", run_json(run)}, {"link", link_json(link)}});
      out << json_text(json{{"history", path}, {"link", link_}, {"streams", stream_list}, {"links", link_list}})
          << "\n";
    } else {
      if (!streams.empty()) out << fmt::format("streams of '{}' across runs:\n{}", link_, stream_trend_table(streams));
      if (!links.empty()) out << fmt::format("fabric link '{}' across runs:\n{}", link_, link_trend_table(links));
    }
    if (streams.empty() && links.empty()) {
      err << fmt::format("no recorded stream or link matches '{}' in {}\n", link_, path);
      return kExitUsage;
    }
    return kExitPass;
  } catch (const std::exception& e) {
    err << e.what() << "\n";
    return kExitUsage;
  }
}

int HistoryCommands::compare(std::ostream& out, std::ostream& err) const {
  WorseThresholds thresholds = thresholds_;
  thresholds.throughput_drop = throughput_drop_percent_ / 100;
  thresholds.latency_p99_rise = latency_rise_percent_ / 100;
  RunRows before, after;
  try {
    before = resolve_run(run_before_, history_path());
    after = resolve_run(run_after_, history_path());
  } catch (const std::exception& e) {
    err << e.what() << "\n";
    return kExitUsage;
  }
  const Comparison comparison = compare_runs(before, after, thresholds);
  if (as_json_) {
    out << json_text(comparison_json(before, after, comparison, thresholds)) << "\n";
  } else {
    out << comparison_text(before, after, comparison);
  }
  if (nothing_compared(comparison)) return kExitUsage;
  return comparison.worse() ? kExitThresholdFailed : kExitPass;
}

}  // namespace tusk
