#include "controller/actions/slurm_nodes.hpp"

#include <chrono>
#include <sstream>

#include "common/command_output.hpp"
#include "common/printable.hpp"

namespace tusk {
namespace {

// slurmctld answers within seconds; one that does not is down, and acting later is no harm.
constexpr std::chrono::milliseconds kSlurmTimeout{15000};
// sinfo's lines for 100,000 nodes in several partitions.
constexpr std::size_t kMaxSinfoBytes = 64 * 1024 * 1024;

}  // namespace

std::map<std::string, SchedulerNode> parse_sinfo_nodes(const std::string& text) {
  std::map<std::string, SchedulerNode> nodes;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto first = line.find('|');
    const auto second = first == std::string::npos ? std::string::npos : line.find('|', first + 1);
    if (second == std::string::npos || first == 0) continue;
    SchedulerNode& node = nodes[printable(line.substr(0, first))];  // once per partition: the same node
    const std::string state = line.substr(first + 1, second - first - 1);
    node.drained = state.starts_with("drain");
    const std::string reason = line.substr(second + 1);
    node.reason = reason == "none" ? std::string() : printable(reason);
  }
  return nodes;
}

std::optional<std::map<std::string, SchedulerNode>> read_slurm_nodes(std::string& error) {
  const CommandOutput sinfo =
      run_command({"sinfo", "--noheader", "--Node", "--format=%N|%T|%E"}, kSlurmTimeout, kMaxSinfoBytes);
  if (!sinfo.ok() || sinfo.truncated) {
    error = sinfo.ok() ? "sinfo: more output than a cluster has nodes" : sinfo.failure("sinfo");
    return std::nullopt;
  }
  return parse_sinfo_nodes(sinfo.out);
}

std::vector<std::string> scontrol_command(const NodeAction& action) {
  if (action.kind == NodeAction::Kind::Drain) {
    return {"scontrol", "update", "NodeName=" + action.node, "State=DRAIN", "Reason=" + action.reason};
  }
  return {"scontrol", "update", "NodeName=" + action.node, "State=RESUME"};
}

std::string take_slurm_action(const NodeAction& action) {
  const CommandOutput done = run_command(scontrol_command(action), kSlurmTimeout, 64 * 1024);
  return done.ok() ? std::string() : done.failure("scontrol");
}

}  // namespace tusk
