#include "controller/actions/take_actions.hpp"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <vector>

#include "controller/actions/kube_nodes.hpp"
#include "controller/actions/node_actions.hpp"
#include "controller/actions/slurm_nodes.hpp"
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

// A dry run where the scheduler cannot be read (tried first from a laptop): what the report alone
// asks of each node, each line saying what the scheduler's view of the node would still decide.
bool dry_run_from_report(const char* scheduler, const std::string& error, const RunBlame& blame, double max_share,
                         const std::function<std::string(const std::string& node, const std::string& fault)>& blamed,
                         const std::function<std::string(const std::string& node)>& passed, std::ostream& out,
                         std::ostream& err) {
  err << fmt::format("act: cannot read {}'s nodes ({}): this dry run says what the report alone asks\n", scheduler,
                     error);
  if (const auto held = hold_back(blame, max_share)) {
    err << fmt::format("act: {}: {}\n", scheduler, held->note);
    return !held->capped;
  }
  for (const auto& [node, fault] : blame.faults) out << "would " << blamed(node, fault) << "\n";
  for (const auto& node : blame.passed) out << "would " << passed(node) << "\n";
  if (blame.faults.empty() && blame.passed.empty()) out << scheduler << ": nothing to do\n";
  return true;
}

bool act_in_slurm(const ActionSettings& settings, const RunBlame& blame, std::ostream& out, std::ostream& err) {
  std::string error;
  const auto nodes = read_slurm_nodes(error);
  if (!nodes && settings.dry_run) {
    return dry_run_from_report(
        "Slurm", error, blame, settings.max_share,
        [&](const std::string& node, const std::string& fault) {
          return fmt::format("{} (unless an operator drained it already)",
                             action_text({NodeAction::Kind::Drain, node, tusk_reason(blame.run_id, fault)}));
        },
        [](const std::string& node) { return fmt::format("resume {} if Tusk drained it", node); }, out, err);
  }
  if (!nodes) {
    err << fmt::format("act: cannot read Slurm's nodes: {}\n", error);
    return false;
  }
  const NodeActionPlan plan = plan_node_actions(blame, *nodes, settings.max_share);
  for (const auto& note : plan.notes) err << "act: Slurm: " << note << "\n";
  bool done = !plan.capped;
  for (const auto& action : plan.actions) {
    if (settings.dry_run) {
      out << "would " << action_text(action) << "\n";
    } else if (const std::string failed = take_slurm_action(action); !failed.empty()) {
      err << fmt::format("act: could not {}: {}\n", action_text(action), failed);
      done = false;
    } else {
      out << action_text(action) << "\n";
    }
  }
  if (plan.actions.empty() && !plan.capped) out << "Slurm: nothing to do\n";
  return done;
}

bool act_in_kubernetes(const ActionSettings& settings, const RunBlame& blame, std::ostream& out, std::ostream& err) {
  std::string error;
  const auto nodes = read_kube_nodes(error);
  if (!nodes && settings.dry_run) {
    return dry_run_from_report(
        "Kubernetes", error, blame, settings.max_share,
        [](const std::string& node, const std::string&) {
          return fmt::format("label {} {}=fail, taint NoSchedule", node, kBurnInKey);
        },
        [](const std::string& node) {
          return fmt::format("label {} {}=pass (and remove Tusk's taint) unless it is so already", node, kBurnInKey);
        },
        out, err);
  }
  if (!nodes) {
    err << fmt::format("act: cannot read Kubernetes' nodes: {}\n", error);
    return false;
  }
  const KubePlan plan = plan_kube_patches(blame, *nodes, settings.max_share);
  for (const auto& note : plan.notes) err << "act: Kubernetes: " << note << "\n";
  bool done = !plan.capped;
  for (const auto& patch : plan.patches) {
    const std::string text = fmt::format("label {} {}={}{}", patch.node, kBurnInKey, patch.result,
                                         patch.result == "fail" ? ", taint NoSchedule" : "");
    if (settings.dry_run) {
      out << "would " << text << "\n";
    } else if (const std::string failed = take_kube_patch(patch); !failed.empty()) {
      err << fmt::format("act: could not {}: {}\n", text, failed);
      done = false;
    } else {
      out << text << "\n";
    }
  }
  if (plan.patches.empty() && !plan.capped) out << "Kubernetes: nothing to do\n";
  return done;
}

bool run_exec(const ActionSettings& settings, const RunBlame& blame, const std::string& report_file, std::ostream& out,
              std::ostream& err) {
  if (const auto held = hold_back(blame, settings.max_share)) {
    err << "act: " << held->note << "; the command is not run\n";
    return !held->capped;
  }
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
  if (settings.dry_run) {
    out << fmt::format("would run: {} ({} blamed, {} passed, {} network links)\n", settings.exec, blamed_nodes.size(),
                       blame.passed.size(), blame.network.size());
    return true;
  }
  out.flush();  // the command's own output follows ours
  try {
    HookCommand command(settings.exec, environment);
    const auto status = command.wait(settings.exec_timeout);
    if (!status) {
      err << fmt::format("act: exec '{}' still running after {} s: killed\n", settings.exec,
                         settings.exec_timeout.count() / 1000);
      return false;
    }
    if (*status != 0) {
      err << fmt::format("act: exec '{}' exited {}\n", settings.exec, *status);
      return false;
    }
  } catch (const std::exception& e) {
    err << "act: " << e.what() << "\n";
    return false;
  }
  out << fmt::format("ran: {}\n", settings.exec);
  return true;
}

}  // namespace

bool take_actions(const ActionSettings& settings, const RunBlame& blame, const std::string& report_file,
                  std::ostream& out, std::ostream& err) {
  for (const auto& [node, fault] : blame.faults) out << fmt::format("blamed {}: {}\n", node, fault);
  bool done = true;
  if (settings.slurm) done &= act_in_slurm(settings, blame, out, err);
  if (settings.kubernetes) done &= act_in_kubernetes(settings, blame, out, err);
  if (!settings.exec.empty()) done &= run_exec(settings, blame, report_file, out, err);
  return done;
}

}  // namespace tusk
