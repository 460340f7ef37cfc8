// What to do with each node after a run: drain (take out of service) what the run blamed, resume
// what Tusk drained before and now passes; never a node an operator drained, and nothing at all
// when the run blames more than a share of its nodes (a test or fabric gone wrong, not that many
// broken hosts; NVIDIA's fabric manager caps its port isolation the same way). Pure: the
// scheduler's state comes in, the actions go out, so each scheduler (Slurm here) only reads and
// writes its own.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/actions/report_blame.hpp"
#include "controller/profile/action_settings.hpp"

namespace tusk {

// A drain's reason starts with this, so a later run knows it is Tusk's to resume.
inline constexpr const char* kTuskReasonPrefix = "tusk ";
// Longer reasons are cut: schedulers show them in one line.
inline constexpr std::size_t kMaxReasonBytes = 160;

struct SchedulerNode {
  bool drained = false;  // drained or draining
  std::string reason;    // why, as the scheduler keeps it ("" when none)
};

struct NodeAction {
  enum class Kind { Drain, Resume };
  Kind kind = Kind::Drain;
  std::string node;
  std::string reason;  // a drain's: "tusk RUN_ID: FAULT"
};

struct NodeActionPlan {
  std::vector<NodeAction> actions;
  std::vector<std::string> notes;  // why a node is left as it is; the cap, when it held
  bool capped = false;
};

// A node's fault as Tusk records it with the scheduler: "tusk RUN_ID: FAULT", cut to kMaxReasonBytes.
std::string tusk_reason(const std::string& run_id, const std::string& fault);

// Why nothing is done when the run blames more than `max_share` of its nodes (and more than one, or
// its only node); nullopt otherwise.
std::optional<std::string> share_cap_note(const RunBlame& blame, double max_share);

// Why no action at all is taken on `blame`: a checkpoint of a run still going (nothing is wrong),
// or the share cap (`capped`: something is left undone); nullopt when every scheduler may act.
struct HoldBack {
  std::string note;
  bool capped = false;
};
std::optional<HoldBack> hold_back(const RunBlame& blame, double max_share);

NodeActionPlan plan_node_actions(const RunBlame& blame, const std::map<std::string, SchedulerNode>& scheduler,
                                 double max_share = kDefaultMaxShare);

}  // namespace tusk
