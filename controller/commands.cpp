#include "controller/commands.hpp"

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
#include "common/printable.hpp"
#include "common/units.hpp"
#include "common/version.hpp"
#include "controller/actions/act_command.hpp"
#include "controller/actions/report_blame.hpp"
#include "controller/actions/take_actions.hpp"
#include "controller/history/baseline_check.hpp"
#include "controller/history/fabric_command.hpp"
#include "controller/history/history_commands.hpp"
#include "controller/history/history_rows.hpp"
#include "controller/history/run_history.hpp"
#include "controller/metrics/metrics_endpoint.hpp"
#include "controller/model/training_model_loader.hpp"
#include "controller/model/training_model_printer.hpp"
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
#include "controller/inventory_command.hpp"
#include "controller/offline_commands.hpp"
#include "controller/run_command.hpp"

namespace tusk {

int controller_main(int argc, char** argv) {
  CLI::App app{
      fmt::format("tusk-controller {}: drives Tusk agents through a profile and judges the fabric", kTuskVersion),
      "tusk-controller"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_line("tusk-controller"));
  bool print_completion = false;
  app.add_flag("--bash-completion", print_completion, "print a bash completion script for tusk-controller and exit");
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn or error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();

  std::vector<std::string> validate_files;
  auto* validate = app.add_subcommand("validate", "check profiles; exit 0 when valid, 2 otherwise");
  validate->add_option("files", validate_files, "profile YAML files")->required();

  std::string plan_file;
  std::vector<std::string> plan_agents;
  bool plan_as_json = false;
  auto* plan = app.add_subcommand("plan", "print the expanded per-agent plan");
  plan->add_option("file", plan_file, "profile YAML file")->required();
  plan->add_option("--agents", plan_agents, "agent names to plan for (default: the profile's hosts)")->delimiter(',');
  plan->add_flag("--json", plan_as_json, "machine-readable output");
  std::string plan_topology;
  plan->add_option("--topology", plan_topology,
                   "topology YAML: places each agent (a host device of its name) at its leaf, for a schedule "
                   "grouped by leaf");
  std::string plan_inventory;
  plan->add_option("--inventory", plan_inventory,
                   "inventory file (`inventory --json`): plans for its agents, and warns where an agent cannot check "
                   "what its plan has it receive, by the rates its own cores measured");

  std::string model_file;
  bool model_as_json = false;
  bool model_binary_units = false;
  auto* model = app.add_subcommand("model", "the network traffic of an AI training job described by a model file");
  model->add_option("file", model_file, "model YAML file (see models/)")->required();
  model->add_flag("--json", model_as_json, "machine-readable output");
  model->add_flag("--binary-units", model_binary_units, "GiB, TiB, PiB, EiB instead of GB, TB, PB, EB");

  std::string run_file;
  RunFlags run_flags;
  ControlPlaneFlags run_control;
  auto* run = add_run_command(app, run_file, run_flags, run_control);

  std::string report_run;
  std::string report_out;
  auto* report =
      app.add_subcommand("report", "draw report.html from an earlier run's report.json, or print its summary");
  report->add_option("run", report_run, "run directory (or its report.json), or a run id of the history")->required();
  report->add_option("--out", report_out, "where to write the page (default: report.html beside report.json)");
  bool report_as_text = false;
  report->add_flag("--text", report_as_text,
                   "print the run's summary (streams, verdicts, suspects, faults, result) instead of drawing the page");

  SeriesCommand series_command(app);

  ControlPlaneFlags inventory_control;
  std::uint32_t expect = 1;
  std::string inventory_wait = "30s";
  std::string inventory_json;
  auto* inventory = app.add_subcommand("inventory", "wait for agents and list their hosts, NICs and clocks");
  inventory_control.add_to(*inventory);
  inventory->add_option("--expect", expect, "how many agents to wait for")->capture_default_str();
  inventory->add_option("--wait", inventory_wait, "how long to wait")->capture_default_str();
  inventory->add_option("--json", inventory_json, "also write the inventory to this file");
  inventory->footer(
      "Exit status: 0 when --expect agents registered that can run tests (each with an engine), 3 when fewer did, 2 "
      "for a usage error.");

  HistoryCommands history_commands(app);
  FabricCommand fabric_command(app);
  TopologyCommands topology_commands(app);
  ActCommand act_command(app);
  // After the subcommands, which would inherit it.
  app.footer(
      "Each command's own options: tusk-controller COMMAND --help. Shipped profiles and models: /usr/share/tusk.");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Alone, --bash-completion needs no subcommand: the missing one is no error then.
    if (!print_completion) return usage_error(app, e, argc, argv) == 0 ? kExitPass : kExitUsage;
  }
  if (print_completion) {
    std::cout << bash_completion(app, "tusk-controller");
    return kExitPass;
  }
  try {
    init_logging("tusk-controller", log_level);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return kExitUsage;
  }
  if (auto code = history_commands.run_chosen(std::cout, std::cerr)) return *code;
  if (auto code = fabric_command.run_chosen(std::cout, std::cerr)) return *code;
  if (auto code = topology_commands.run_chosen(std::cout, std::cerr)) return *code;
  if (auto code = act_command.run_chosen(std::cout, std::cerr)) return *code;
  if (*validate) return command_validate(validate_files);
  if (*plan) return command_plan(plan_file, plan_agents, plan_topology, plan_inventory, plan_as_json);
  if (*model) return command_model(model_file, model_as_json, model_binary_units);
  if (*report) return command_report(report_run, report_out, report_as_text);
  if (auto code = series_command.run_chosen()) return *code;
  raise_descriptor_limit();
  if (*run) return command_run(run_file, run_control, run_flags);
  if (*inventory) return command_inventory(inventory_control, expect, inventory_wait, inventory_json);
  return kExitUsage;
}

}  // namespace tusk
