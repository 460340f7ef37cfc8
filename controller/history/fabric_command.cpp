#include "controller/history/fabric_command.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/clock.hpp"
#include "common/exit_codes.hpp"
#include "common/json_text.hpp"
#include "common/units.hpp"
#include "controller/history/history_table.hpp"
#include "controller/history/run_history.hpp"

namespace tusk {
namespace {

using json = nlohmann::ordered_json;

std::string time_of(const std::optional<std::int64_t>& ns) {
  return ns ? utc_iso_time(*ns).substr(0, 16) : "-";  // to the minute
}

// "loss 2.0 % (high)", "failure", "3 of 40 streams failed".
std::string word_text(const FabricRun& run) {
  if (!run.kind.empty() || !run.confidence.empty()) {
    std::string text = run.kind.empty() ? std::string("blamed") : run.kind;
    if (run.rate) text += " " + units::format_ratio(*run.rate);
    if (!run.confidence.empty()) text += " (" + run.confidence + ")";
    return text;
  }
  return fmt::format("{} of {} stream{} failed", run.failing, run.of, run.of == 1 ? "" : "s");
}

json entry_json(const FabricEntry& entry) {
  json runs = json::array();
  for (const auto& run : entry.runs) {
    json word{{"run_id", run.run_id},
              {"started", run.started_ns ? json(utc_iso_time(*run.started_ns)) : json(nullptr)},
              {"blamed", run.blamed}};
    if (run.blamed) {
      word["kind"] = run.kind;
      word["rate"] = run.rate ? json(*run.rate) : json(nullptr);
      word["confidence"] = run.confidence;
    }
    word["failing"] = run.failing;
    word["of"] = run.of;
    runs.push_back(std::move(word));
  }
  return {{"key", entry.key},
          {"name", entry.name},
          {"state", entry.state},
          {"why", entry.why},
          {"rests_on", entry.rests_on},
          {"runs_exercised", entry.runs.size()},
          {"runs_blamed", entry.blames},
          {"first_seen", entry.runs.empty() || !entry.runs.front().started_ns
                             ? json(nullptr)
                             : json(utc_iso_time(*entry.runs.front().started_ns))},
          {"last_seen", entry.runs.empty() || !entry.runs.back().started_ns
                            ? json(nullptr)
                            : json(utc_iso_time(*entry.runs.back().started_ns))},
          {"runs", std::move(runs)}};
}

std::string entries_text(const std::string& title, const std::vector<FabricEntry>& entries) {
  if (entries.empty()) return "";
  std::size_t not_clean = 0;
  for (const auto& entry : entries) not_clean += entry.state != "clean";
  std::vector<std::vector<std::string>> rows{
      {"STATE", "NAME", "RUNS", "BLAMED", "FIRST SEEN", "LAST SEEN", "LAST BLAME", "WHY"}};
  for (const auto& entry : entries) {
    std::string last_blame = "-";
    for (const auto& run : entry.runs) {
      if (run.blamed) last_blame = run.run_id + ": " + word_text(run);
    }
    rows.push_back({entry.state, entry.name, std::to_string(entry.runs.size()), std::to_string(entry.blames),
                    time_of(entry.runs.front().started_ns), time_of(entry.runs.back().started_ns), last_blame,
                    entry.why});
  }
  return fmt::format("{} ({} of {} not clean):\n{}", title, not_clean, entries.size(), table_text(rows));
}

// One link or host, run by run.
std::string entry_runs_text(const FabricEntry& entry) {
  std::string text = fmt::format("{} ({}): {}: {}\n", entry.name, entry.key, entry.state, entry.why);
  std::vector<std::vector<std::string>> rows{{"RUN", "STARTED", "WORD"}};
  for (const auto& run : entry.runs) {
    rows.push_back({run.run_id, time_of(run.started_ns), run.blamed ? "blamed: " + word_text(run) : "clean"});
  }
  return text + table_text(rows);
}

}  // namespace

FabricCommand::FabricCommand(CLI::App& app) {
  fabric_ = app.add_subcommand("fabric",
                               "each link's and host's record across the history's runs: runs that exercised and "
                               "blamed it, and its state (clean, suspect, repaired, repeat offender)");
  fabric_->add_option("--history", history_path_,
                      "the history: an SQLite file, or a PostgreSQL database (postgresql://..., service=NAME) "
                      "(default: " +
                          default_history_path() + ")");
  fabric_->add_option("--since", since_, "only runs that started this long ago or later (7d, 12h)");
  fabric_->add_option("--link", link_, "one link (its key or name) or host, run by run");
  fabric_->add_flag("--json", as_json_, "machine-readable output");
  fabric_
      ->add_option("--repeat-blames", settings_.repeat_blames,
                   "a repeat offender is blamed in this many of its last --repeat-window runs")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  fabric_->add_option("--repeat-window", settings_.repeat_window, "the runs --repeat-blames counts in")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  fabric_
      ->add_option("--clean-to-repair", settings_.clean_to_repair,
                   "clean runs after its last blame before a link or host is repaired")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
}

std::optional<int> FabricCommand::run_chosen(std::ostream& out, std::ostream& err) const {
  if (!*fabric_) return std::nullopt;
  const std::string path = history_path_.empty() ? default_history_path() : history_path_;
  try {
    std::int64_t since_ns = 0;
    if (!since_.empty()) since_ns = realtime_ns() - units::parse_duration(since_).count();
    if (!history_exists(path)) {
      err << fmt::format("no history at {}: nothing recorded yet\n", path);
      return kExitUsage;
    }
    const RunHistory history(path);
    const FabricRecord record = fabric_record(history.links_since(since_ns), history.hosts_since(since_ns), settings_);
    if (!link_.empty()) {
      for (const auto* entries : {&record.links, &record.hosts}) {
        for (const auto& entry : *entries) {
          if (entry.key != link_ && entry.name != link_) continue;
          out << (as_json_ ? json_text(entry_json(entry)) + "\n" : entry_runs_text(entry));
          return kExitPass;
        }
      }
      err << fmt::format("'{}': no link or host of that key or name in {}'s runs{}\n", link_, history.path(),
                         since_.empty() ? "" : " since " + since_);
      return kExitUsage;
    }
    if (as_json_) {
      json links = json::array();
      for (const auto& entry : record.links) links.push_back(entry_json(entry));
      json hosts = json::array();
      for (const auto& entry : record.hosts) hosts.push_back(entry_json(entry));
      out << json_text(json{{"history", history.path()},
                            {"runs", record.runs},
                            {"settings",
                             {{"repeat_blames", settings_.repeat_blames},
                              {"repeat_window", settings_.repeat_window},
                              {"clean_to_repair", settings_.clean_to_repair}}},
                            {"links", std::move(links)},
                            {"hosts", std::move(hosts)}})
          << "\n";
      return kExitPass;
    }
    out << fmt::format("the fabric's record over {} run{} in {}{}\n", record.runs.size(),
                       record.runs.size() == 1 ? "" : "s", history.path(), since_.empty() ? "" : " since " + since_);
    out << entries_text("links", record.links) << entries_text("hosts", record.hosts);
    return kExitPass;
  } catch (const std::exception& e) {
    err << e.what() << "\n";
    return kExitUsage;
  }
}

}  // namespace tusk
