#include "controller/offline_commands.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/build_info.hpp"
#include "common/cli_completion.hpp"
#include "common/cli_suggestion.hpp"
#include "common/json_text.hpp"
#include "common/logging.hpp"
#include "common/ordered_json.hpp"
#include "common/printable.hpp"
#include "common/units.hpp"
#include "common/version.hpp"
#include "controller/actions/act_command.hpp"
#include "controller/actions/report_blame.hpp"
#include "controller/actions/take_actions.hpp"
#include "controller/history/baseline_check.hpp"
#include "controller/history/history_commands.hpp"
#include "controller/history/history_rows.hpp"
#include "controller/history/run_history.hpp"
#include "controller/metrics/metrics_endpoint.hpp"
#include "controller/model/training_model_loader.hpp"
#include "controller/model/training_model_printer.hpp"
#include "controller/plan/check_loads.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/report/plan_printer.hpp"
#include "controller/report/report_text.hpp"
#include "controller/report/reports.hpp"
#include "controller/run/run_orchestrator.hpp"
#include "controller/series/series_file.hpp"
#include "controller/series/series_outcome.hpp"
#include "controller/series/series_reader.hpp"
#include "controller/switches/snmp_credentials.hpp"
#include "controller/switches/switch_queries.hpp"
#include "controller/switches/topology_commands.hpp"

#include "controller/command_flags.hpp"

namespace tusk {
namespace {

// Agent names for `plan` without live agents: the profile's hosts, else --agents, else
// "agent-1".."agent-N" for a count.
std::vector<std::string> offline_agents(const Profile& profile, const std::vector<std::string>& given) {
  std::vector<std::string> names = given;
  if (names.empty()) names = profile.agents.hosts;
  if (names.empty() && profile.agents.count && profile.agents.patterns.empty()) {
    for (std::uint32_t i = 1; i <= *profile.agents.count; ++i) names.push_back(fmt::format("agent-{}", i));
  }
  if (names.empty()) {
    throw PlanError("the profile selects agents by pattern: name them with --agents a,b,c to expand the plan");
  }
  auto selection = select_agents(profile.agents, names);
  if (!selection.complete) throw PlanError(fmt::format("cannot select agents: {}", selection.shortfall));
  return selection.chosen;
}

}  // namespace

int command_validate(const std::vector<std::string>& files) {
  int status = kExitPass;
  for (const auto& file : files) {
    auto profile = load_or_report(file);
    if (!profile) {
      status = kExitUsage;
      continue;
    }
    std::cout << fmt::format("{}: valid profile '{}' with {} test(s)\n", file, profile->name, profile->tests.size());
  }
  return status;
}

int command_plan(const std::string& file, const std::vector<std::string>& agents, const std::string& topology_file,
                 const std::string& inventory_file, bool as_json) {
  auto profile = load_or_report(file);
  if (!profile) return kExitUsage;
  std::optional<FabricTopology> topology;
  if (!topology_file.empty()) {
    try {
      topology = load_topology_file(topology_file);
    } catch (const TopologyFileInvalid& invalid) {
      for (const auto& error : invalid.errors()) std::cerr << error.to_string() << "\n";
      return kExitUsage;
    } catch (const std::exception& e) {
      std::cerr << fmt::format("{}: {}\n", topology_file, e.what());
      return kExitUsage;
    }
  }
  std::map<std::string, proto::Inventory> inventories;
  std::vector<std::string> names = agents;
  if (!inventory_file.empty()) {
    try {
      inventories = read_inventory_file(inventory_file);
    } catch (const std::exception& e) {
      std::cerr << e.what() << "\n";
      return kExitUsage;
    }
    // The profile selects among the agents the file lists, as it would among those registered.
    if (names.empty()) {
      for (const auto& [name, inventory] : inventories) names.push_back(name);
    }
  }
  try {
    const auto plan =
        expand_plan(*profile, offline_agents(*profile, names), "plan-only", topology ? &*topology : nullptr);
    const auto warnings = check_loads(plan.tests, inventories);
    if (as_json) {
      auto out = plan_json(*profile, plan);
      if (!inventory_file.empty()) {
        out["check_load_warnings"] = nlohmann::json::array();
        for (const auto& warning : warnings) {
          out["check_load_warnings"].push_back(
              {{"test", profile->tests[warning.test].name}, {"agent", warning.agent}, {"warning", warning.text}});
        }
      }
      std::cout << json_text(out) << "\n";
    } else {
      std::cout << plan_text(*profile, plan);
    }
    for (const auto& warning : warnings) {
      std::cerr << fmt::format("warning: test '{}', agent '{}': {}\n", profile->tests[warning.test].name, warning.agent,
                               warning.text);
    }
    return kExitPass;
  } catch (const PlanError& e) {
    std::cerr << fmt::format("{}: {}\n", file, e.what());
    return kExitUsage;
  }
}

// The communication of a training job described by a model file; nothing is run.
int command_model(const std::string& file, bool as_json, bool binary_units) {
  traffic::TrainingSpec spec;
  try {
    spec = load_model_file(file);
  } catch (const ModelFileInvalid& invalid) {
    for (const auto& error : invalid.errors()) std::cerr << error.to_string() << "\n";
    std::cerr << fmt::format("{}: {} error(s)\n", file, invalid.errors().size());
    return kExitUsage;
  }
  const auto report = traffic::analyse(spec);
  if (as_json) {
    std::cout << json_text(traffic::model_json(spec, report)) << "\n";
  } else {
    std::cout << traffic::model_text(spec, report, binary_units);
  }
  return kExitPass;
}

// report.html from an earlier run: RUN_DIR/report.json (or that file named directly) drawn into
// RUN_DIR/report.html, or into --out.
int command_report(const std::string& given, const std::string& out, bool as_text) {
  namespace fs = std::filesystem;
  if (as_text && !out.empty()) {
    std::cerr << "report: --text prints the summary on stdout; --out is where the page goes: give one or the other\n";
    return kExitUsage;
  }
  std::string run;
  try {
    run = run_location(given);
  } catch (const std::exception& e) {
    std::cerr << fmt::format("report: {}\n", e.what());
    return kExitUsage;
  }
  const fs::path input = fs::is_directory(run) ? fs::path(run) / "report.json" : fs::path(run);
  std::error_code no_file;
  const bool from_series =
      fs::is_directory(run) && !fs::exists(input, no_file) && fs::exists(fs::path(run) / kSeriesFileName, no_file);
  std::ifstream file(input);
  if (!file && !from_series) {
    std::cerr << fmt::format("{}: cannot read it: {}\n", input.string(), std::strerror(errno));
    return kExitUsage;
  }
  std::string html;
  try {
    // A run that left no report.json is drawn from its series file, and says so. A report.json is
    // read as OrderedJson (ordered_json reads an object of n keys in n² time) and drawn as ordered_json.
    if (from_series) {
      std::cerr << fmt::format("report: {} has no report.json: drawing the run from its {}\n", run, kSeriesFileName);
    }
    const auto report = from_series ? report_json(outcome_from_series((fs::path(run) / kSeriesFileName).string()))
                                    : nlohmann::ordered_json(parse_json<OrderedJson>(file));
    if (!report.is_object() || !report.contains("run_id") || !report.contains("tests")) {
      std::cerr << fmt::format("{}: not a Tusk report.json (no run_id or tests)\n", input.string());
      return kExitUsage;
    }
    if (as_text) {
      std::cout << report_text(report);
      return kExitPass;
    }
    html = report_html(report);
  } catch (const nlohmann::json::parse_error& e) {
    std::cerr << fmt::format("{}: not a Tusk report.json: not JSON (byte {})\n", input.string(), e.byte);
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << fmt::format("{}: {}\n", input.string(), e.what());
    return kExitUsage;
  }
  const fs::path output = out.empty() ? input.parent_path() / "report.html" : fs::path(out);
  std::ofstream page(output);
  page << html;
  page.close();
  if (!page) {
    std::cerr << fmt::format("cannot write '{}'\n", output.string());
    return kExitUsage;
  }
  std::cout << fmt::format("report: {}\n", output.string());
  return kExitPass;
}

SeriesCommand::SeriesCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "series",
      "print a run's streams from its series file: every sample kept at full resolution, a line per minute where none "
      "is left, each counter as its change since the line before");
  command_->add_option("run", run_, "run directory (or its series.sqlite), or a run id of the history")->required();
  command_->add_option("--test", query_.test, "one test's rows, by its index from 0");
  command_->add_option("--agent", query_.agent, "the streams this agent measured");
  command_->add_option("--stream", query_.stream, "one stream id, e.g. rx:lab-a/1");
  auto* csv = command_->add_flag("--csv", csv_, "comma-separated, a column per counter and gauge");
  command_->add_flag("--json", json_, "JSON Lines: an object per row")->excludes(csv);
  auto* minutes = command_->add_flag("--minutes", minutes_,
                                     "a line per minute: each counter's change, least and most a sample; each "
                                     "gauge's least, most, mean and last");
  command_->add_flag("--full", full_, "only the samples kept at full resolution")->excludes(minutes);
}

// A run's samples from its series file; no sample is a usage error only where a filter matched none.
std::optional<int> SeriesCommand::run_chosen() {
  if (!*command_) return std::nullopt;
  std::string run = run_;
  const SeriesQuery& query = query_;
  const SeriesResolution resolution = minutes_ ? SeriesResolution::Minutes
                                      : full_  ? SeriesResolution::Full
                                               : SeriesResolution::Night;
  const bool as_csv = csv_, as_json = json_;
  try {
    run = run_location(run);
    const std::uint64_t rows = print_series(run, query,
                                            as_csv    ? SeriesFormat::Csv
                                            : as_json ? SeriesFormat::Json
                                                      : SeriesFormat::Table,
                                            std::cout, resolution);
    if (rows > 0) return kExitPass;
    const bool filtered = query.test || !query.agent.empty() || !query.stream.empty();
    std::cerr << fmt::format("series: {} in {}\n",
                             filtered ? fmt::format("no sample matches{}{}{}",
                                                    query.test ? fmt::format(" --test {}", *query.test) : std::string(),
                                                    query.agent.empty() ? "" : " --agent " + query.agent,
                                                    query.stream.empty() ? "" : " --stream " + query.stream)
                                      : std::string("no sample at all"),
                             run);
    return filtered ? kExitUsage : kExitPass;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return kExitUsage;
  }
}

}  // namespace tusk
