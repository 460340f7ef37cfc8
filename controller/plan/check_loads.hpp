// `plan --inventory`: each agent's plan held to the check rates its inventory says it measured, so
// a profile that asks an agent to receive more than its cores can check is said before anything
// runs (issue 61). The inventory file is the one `tusk-controller inventory --json` writes.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "controller/plan/planner.hpp"
#include "tusk.pb.h"

namespace tusk {

// An agent's inventory as the inventory file holds it (its "inventory" member).
nlohmann::json inventory_file_json(const proto::Inventory& inventory);

// The inventory file's agents, by name. Throws std::runtime_error that names the file and the
// field (`agents[2].inventory: ...`) for a file that is not one.
std::map<std::string, proto::Inventory> read_inventory_file(const std::string& path);

struct CheckLoadWarning {
  std::size_t test = 0;
  std::string agent;
  std::string text;
};

// For each test's plans ([test][agent]) whose agent the inventories hold, what its engine says of
// checking what it receives (EngineSlice::check_load); nothing for agents the file does not hold.
std::vector<CheckLoadWarning> check_loads(const std::vector<std::vector<AgentPlan>>& tests,
                                          const std::map<std::string, proto::Inventory>& inventories);

}  // namespace tusk
