// `tusk-controller plan`: the expanded per-agent plan, for people and for programs.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "controller/plan/planner.hpp"
#include "controller/profile/profile.hpp"

namespace tusk {

struct ExpandedPlan {
  std::vector<std::string> agents;
  std::vector<std::vector<AgentPlan>> tests;  // [test index][agent]
};

// Throws PlanError when a test's topology does not fit the agents.
ExpandedPlan expand_plan(const Profile& profile, const std::vector<std::string>& agents, const std::string& run_id);

std::string plan_text(const Profile& profile, const ExpandedPlan& plan);
nlohmann::json plan_json(const Profile& profile, const ExpandedPlan& plan);

}  // namespace tusk
