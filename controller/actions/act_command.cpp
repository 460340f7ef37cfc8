#include "controller/actions/act_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/exit_codes.hpp"
#include "common/units.hpp"
#include "controller/actions/report_blame.hpp"
#include "controller/actions/take_actions.hpp"
#include "controller/history/history_commands.hpp"
#include "controller/history/history_rows.hpp"

namespace tusk {

ActCommand::ActCommand(CLI::App& app) {
  act_ = app.add_subcommand("act",
                            "take a run's verdict to the scheduler: drain the nodes it blames, resume those Tusk "
                            "drained that now pass");
  act_->add_option("report", report_, "run directory (or its report.json), or a run id of the history")->required();
  act_->add_flag("--slurm", slurm_,
                 "in Slurm (sinfo, scontrol; SLURM_CONF as for any Slurm command): drain with reason \"tusk RUN_ID: "
                 "FAULT\", resume only nodes drained with such a reason");
  act_->add_flag("--kubernetes", kubernetes_,
                 "in Kubernetes (kubectl: its pod's service account, else KUBECONFIG): label each judged node "
                 "tusk.io/burn-in=pass|fail; taint a failed one tusk.io/burn-in=RUN_ID:NoSchedule, untaint it when "
                 "it passes");
  act_->add_option("--max-share", max_share_,
                   "act on none when the run blames more than this share of its nodes (\"5%\", \"0.05\")")
      ->capture_default_str();
  act_->add_option("--exec", exec_,
                   "also run this command (/bin/sh -c) with the blame in its environment: TUSK_RUN_ID, TUSK_REPORT, "
                   "TUSK_BLAMED_NODES and TUSK_PASSED_NODES (a node a line), TUSK_BLAMED (\"NODE<tab>FAULT\" a line), "
                   "TUSK_NETWORK_LINKS (a suspect between switches a line); not when the share cap holds");
  act_->add_option("--exec-timeout", exec_timeout_, "kill the --exec command after this long")->capture_default_str();
  act_->add_flag("--dry-run", dry_run_, "print what would be done and do nothing");
  act_->footer(
      "A node is the agent's host as its certificate proves it (report.json agents[].node), by its short name. Blamed: "
      "a host problem, a named suspect that is the host's cable, a "
      "failing loopback stream, failing optics, a test that failed on the host alone. Exit status: 0 "
      "when every action was taken (or "
      "none was needed), 1 when the share cap or a failing command left something undone, 2 for a usage error or a "
      "file that is not a report.");
}

std::optional<int> ActCommand::run_chosen(std::ostream& out, std::ostream& err) const {
  if (!act_->parsed()) return std::nullopt;
  return act(out, err);
}

int ActCommand::act(std::ostream& out, std::ostream& err) const {
  RunBlame blame;
  ActionSettings settings;
  settings.slurm = slurm_;
  settings.kubernetes = kubernetes_;
  settings.exec = exec_;
  settings.dry_run = dry_run_;
  std::string file = report_;  // the report.json, for the --exec command and messages
  try {
    if (!settings.any()) throw std::runtime_error("act: say where to act: --slurm, --kubernetes, --exec COMMAND");
    try {
      settings.max_share = units::parse_ratio(max_share_);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("--max-share {}: {}", max_share_, e.what()));
    }
    try {
      settings.exec_timeout =
          std::chrono::duration_cast<std::chrono::milliseconds>(units::parse_duration(exec_timeout_));
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("--exec-timeout {}: {}", exec_timeout_, e.what()));
    }
    const std::string location = run_location(report_);  // a run's directory, its report.json, or a run id
    file = location;
    const nlohmann::json report = read_report_file(location);
    if (std::filesystem::is_directory(location)) file = (std::filesystem::path(location) / "report.json").string();
    blame = blame_from_report(report, file);
  } catch (const std::exception& e) {
    err << e.what() << "\n";
    return kExitUsage;
  }
  return take_actions(settings, blame, file, out, err) ? kExitPass : kExitThresholdFailed;
}

}  // namespace tusk
