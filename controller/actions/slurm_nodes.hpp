// Slurm's side of the node actions: which nodes are drained and why (`sinfo`), and a drain or a
// resume (`scontrol update`), each run without a shell, within a time and a size. The programs
// are found on PATH and read SLURM_CONF as every Slurm command does.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/actions/node_actions.hpp"

namespace tusk {

// Every node Slurm knows, by name; nullopt with `error` set when sinfo fails.
std::optional<std::map<std::string, SchedulerNode>> read_slurm_nodes(std::string& error);

// sinfo's `%N|%T|%E` lines: node, long state ("drained", "draining*", "idle"), reason ("none").
std::map<std::string, SchedulerNode> parse_sinfo_nodes(const std::string& text);

// The scontrol command that takes `action`.
std::vector<std::string> scontrol_command(const NodeAction& action);

// Runs it; "" when done, else why not ("scontrol: exit 1: Invalid node name specified").
std::string take_slurm_action(const NodeAction& action);

}  // namespace tusk
