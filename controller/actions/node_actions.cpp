#include "controller/actions/node_actions.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/printable.hpp"
#include "common/units.hpp"

namespace tusk {
namespace {

bool drained_by_tusk(const SchedulerNode& node) {
  return node.drained && node.reason.starts_with(kTuskReasonPrefix);
}

}  // namespace

std::string tusk_reason(const std::string& run_id, const std::string& fault) {
  std::string reason = fmt::format("{}{}: {}", kTuskReasonPrefix, run_id, fault);
  if (reason.size() > kMaxReasonBytes) reason = cut_utf8(reason, kMaxReasonBytes - 3) + "...";
  return reason;
}

std::optional<std::string> share_cap_note(const RunBlame& blame, double max_share) {
  const std::size_t blamed = blame.faults.size();
  // One node is always allowed unless it is every node of the run: at the default 5 % a rack of
  // fewer than 20 nodes would otherwise never act on its one bad host.
  const double floor = blame.nodes.size() > 1 ? 1.0 : 0.0;
  const double allowed = std::max(floor, max_share * static_cast<double>(blame.nodes.size()));
  if (blamed == 0 || static_cast<double>(blamed) <= allowed) return std::nullopt;
  return fmt::format(
      "run {} blames {} of its {} nodes ({}), more than max_share {}: acting on none (a test or the fabric may be at "
      "fault, not that many hosts; one node of several is always allowed, --max-share or actions: max_share allows "
      "more)",
      blame.run_id, blamed, blame.nodes.size(),
      units::format_percent(static_cast<double>(blamed) / static_cast<double>(blame.nodes.size())),
      units::format_percent(max_share));
}

std::optional<HoldBack> hold_back(const RunBlame& blame, double max_share) {
  if (!blame.finished) {
    return HoldBack{fmt::format("run {}: a checkpoint of a run still going, not its end: no action", blame.run_id),
                    false};
  }
  if (auto capped = share_cap_note(blame, max_share)) return HoldBack{std::move(*capped), true};
  return std::nullopt;
}

NodeActionPlan plan_node_actions(const RunBlame& blame, const std::map<std::string, SchedulerNode>& scheduler,
                                 double max_share) {
  NodeActionPlan plan;
  if (auto held = hold_back(blame, max_share)) {
    plan.capped = held->capped;
    plan.notes.push_back(std::move(held->note));
    return plan;
  }
  for (const auto& [node, fault] : blame.faults) {
    const auto state = scheduler.find(node);
    if (state == scheduler.end()) {
      plan.notes.push_back(fmt::format("{}: blamed ({}), but the scheduler has no such node", node, fault));
    } else if (drained_by_tusk(state->second)) {
      plan.notes.push_back(fmt::format("{}: already drained by Tusk ({})", node, state->second.reason));
    } else if (state->second.drained) {
      plan.notes.push_back(fmt::format("{}: blamed ({}), already drained by an operator ({}): left as it is", node,
                                       fault, state->second.reason));
    } else {
      plan.actions.push_back({NodeAction::Kind::Drain, node, tusk_reason(blame.run_id, fault)});
    }
  }
  for (const auto& node : blame.passed) {
    const auto state = scheduler.find(node);
    if (state == scheduler.end() || !state->second.drained) continue;
    if (drained_by_tusk(state->second)) {
      plan.actions.push_back({NodeAction::Kind::Resume, node, {}});
    } else {
      plan.notes.push_back(
          fmt::format("{}: passed, but drained by an operator ({}): not resumed", node, state->second.reason));
    }
  }
  for (const auto& link : blame.network) {
    plan.notes.push_back(fmt::format("{}: a suspect link between switches, for the network team", link));
  }
  return plan;
}

}  // namespace tusk
