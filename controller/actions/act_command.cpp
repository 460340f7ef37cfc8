#include "controller/actions/act_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/units.hpp"
#include "controller/actions/node_actions.hpp"
#include "controller/actions/report_blame.hpp"
#include "controller/actions/slurm_nodes.hpp"
#include "controller/outcome/run_outcome.hpp"

namespace tusk {
namespace {

nlohmann::json read_report(const std::string& path) {
  std::filesystem::path file(path);
  if (std::filesystem::is_directory(file)) file /= "report.json";
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read it", file.string()));
  nlohmann::json report = nlohmann::json::parse(in, nullptr, false);
  if (report.is_discarded()) throw std::runtime_error(fmt::format("{}: not JSON", file.string()));
  return report;
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
  act_->add_flag("--dry-run", dry_run_, "print what would be done and do nothing");
  act_->footer(
      "A node is an agent's short hostname. Blamed: a host problem, a named suspect that is the host's cable, a "
      "failing stream through the host's own port, failing optics. Exit status: 0 when every action was taken (or "
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
  try {
    if (!slurm_) throw std::runtime_error("act: say where to act: --slurm");
    try {
      max_share = units::parse_ratio(max_share_);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("--max-share {}: {}", max_share_, e.what()));
    }
    blame = blame_from_report(read_report(report_), report_);
  } catch (const std::exception& e) {
    err << e.what() << "\n";
    return kExitUsage;
  }
  for (const auto& [node, fault] : blame.faults) out << fmt::format("blamed {}: {}\n", node, fault);
  std::string error;
  const auto nodes = read_slurm_nodes(error);
  if (!nodes) {
    err << fmt::format("act: cannot read Slurm's nodes: {}\n", error);
    return kExitThresholdFailed;
  }
  const NodeActionPlan plan = plan_node_actions(blame, *nodes, max_share);
  for (const auto& note : plan.notes) err << "act: " << note << "\n";
  bool undone = plan.capped;
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
  if (plan.actions.empty() && !plan.capped) out << "nothing to do\n";
  return undone ? kExitThresholdFailed : kExitPass;
}

}  // namespace tusk
