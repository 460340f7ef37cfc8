#include "controller/actions/act_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/units.hpp"
#include "controller/actions/node_actions.hpp"
#include "controller/actions/report_blame.hpp"
#include "controller/actions/slurm_nodes.hpp"
#include "controller/history/history_rows.hpp"
#include "controller/outcome/run_outcome.hpp"
#include "controller/run/hook_command.hpp"

namespace tusk {
namespace {

// Lines of a list, for one environment variable.
std::string lines(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += item + "\n";
  return out;
}

std::string action_text(const NodeAction& action) {
  return action.kind == NodeAction::Kind::Drain ? fmt::format("drain {}: {}", action.node, action.reason)
                                                : fmt::format("resume {}", action.node);
}

}  // namespace

ActCommand::ActCommand(CLI::App& app) {
  act_ = app.add_subcommand("act",
                            "take a run's verdict to the scheduler: drain the nodes it blames, resume those Tusk "
                            "drained that now pass");
  act_->add_option("report", report_, "run directory (or its report.json)")->required();
  act_->add_flag("--slurm", slurm_,
                 "in Slurm (sinfo, scontrol; SLURM_CONF as for any Slurm command): drain with reason \"tusk RUN_ID: "
                 "FAULT\", resume only nodes drained with such a reason");
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
      "A node is an agent's short hostname. Blamed: a host problem, a named suspect that is the host's cable, a "
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
  double max_share = kDefaultMaxShare;
  std::chrono::milliseconds exec_limit{0};
  std::string file = report_;  // the report.json, for the --exec command and messages
  try {
    if (!slurm_ && exec_.empty()) throw std::runtime_error("act: say where to act: --slurm, --exec COMMAND or both");
    try {
      max_share = units::parse_ratio(max_share_);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("--max-share {}: {}", max_share_, e.what()));
    }
    try {
      exec_limit = std::chrono::duration_cast<std::chrono::milliseconds>(units::parse_duration(exec_timeout_));
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("--exec-timeout {}: {}", exec_timeout_, e.what()));
    }
    const nlohmann::json report = read_report_file(report_);  // a run's directory or its report.json
    if (std::filesystem::is_directory(report_)) file = (std::filesystem::path(report_) / "report.json").string();
    blame = blame_from_report(report, file);
  } catch (const std::exception& e) {
    err << e.what() << "\n";
    return kExitUsage;
  }
  for (const auto& [node, fault] : blame.faults) out << fmt::format("blamed {}: {}\n", node, fault);
  bool undone = false;
  if (slurm_) {
    std::string error;
    const auto nodes = read_slurm_nodes(error);
    if (!nodes) {
      err << fmt::format("act: cannot read Slurm's nodes: {}\n", error);
      return kExitThresholdFailed;
    }
    const NodeActionPlan plan = plan_node_actions(blame, *nodes, max_share);
    for (const auto& note : plan.notes) err << "act: " << note << "\n";
    undone = plan.capped;
    for (const auto& action : plan.actions) {
      if (dry_run_) {
        out << "would " << action_text(action) << "\n";
        continue;
      }
      if (const std::string failed = take_slurm_action(action); !failed.empty()) {
        err << fmt::format("act: could not {}: {}\n", action_text(action), failed);
        undone = true;
        continue;
      }
      out << action_text(action) << "\n";
    }
    if (plan.actions.empty() && !plan.capped) out << "Slurm: nothing to do\n";
  }
  if (!exec_.empty()) {
    if (!blame.finished) {
      err << fmt::format("act: run {} is a checkpoint of a run still going: --exec not run\n", blame.run_id);
    } else if (const auto capped = share_cap_note(blame, max_share)) {
      if (!slurm_) err << "act: " << *capped << "\n";
      err << "act: --exec not run\n";
      undone = true;
    } else if (!run_exec(file, blame, exec_limit, out, err)) {
      undone = true;
    }
  }
  return undone ? kExitThresholdFailed : kExitPass;
}

bool ActCommand::run_exec(const std::string& report_file, const RunBlame& blame, std::chrono::milliseconds limit,
                          std::ostream& out, std::ostream& err) const {
  std::vector<std::string> blamed_nodes, blamed;
  for (const auto& [node, fault] : blame.faults) {
    blamed_nodes.push_back(node);
    blamed.push_back(node + "\t" + fault);
  }
  const std::map<std::string, std::string> environment = {
      {"TUSK_RUN_ID", blame.run_id},
      {"TUSK_REPORT", report_file},
      {"TUSK_BLAMED_NODES", lines(blamed_nodes)},
      {"TUSK_PASSED_NODES", lines(blame.passed)},
      {"TUSK_BLAMED", lines(blamed)},
      {"TUSK_NETWORK_LINKS", lines(blame.network)},
  };
  if (dry_run_) {
    out << fmt::format("would run: {} ({} blamed, {} passed, {} network links)\n", exec_, blamed_nodes.size(),
                       blame.passed.size(), blame.network.size());
    return true;
  }
  out.flush();  // the command's own output follows ours
  try {
    HookCommand command(exec_, environment);
    const auto status = command.wait(limit);
    if (!status) {
      err << fmt::format("act: --exec '{}' still running after {} s: killed\n", exec_, limit.count() / 1000);
      return false;
    }
    if (*status != 0) {
      err << fmt::format("act: --exec '{}' exited {}\n", exec_, *status);
      return false;
    }
  } catch (const std::exception& e) {
    err << "act: " << e.what() << "\n";
    return false;
  }
  out << fmt::format("ran: {}\n", exec_);
  return true;
}

}  // namespace tusk
