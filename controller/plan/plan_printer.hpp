// `tusk-controller plan`: the expanded per-agent plan, for people and for programs.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "controller/plan/planner.hpp"
#include "controller/profile/profile.hpp"

namespace tusk {

// A method test's steps as planned: every step of a method whose steps are fixed (a sweep,
// incast), or, for a search, how many trials it may take.
struct PlannedSteps {
  std::vector<std::string> names;                  // fixed steps: each one's name ("test [2 MiB]")
  std::vector<std::chrono::milliseconds> lengths;  // ... and duration
  std::vector<std::string> lines;                  // ... and its first agent's plan line
  std::size_t least_trials = 0;                    // a search: at least this many trials
  std::size_t most_trials = 0;                     // ... and at most this many
  std::chrono::milliseconds trial{0};              // ... of this length each
  std::string note;                                // why the steps are not listed (they are planned at run time)
};

struct ExpandedPlan {
  std::vector<std::string> agents;
  std::vector<std::vector<AgentPlan>> tests;       // [test index][agent]
  std::vector<std::optional<PlannedSteps>> steps;  // [test index]: a method test's steps
};

// How long the profile takes: its tests' durations and, for a method, its steps' (a search at
// most); each test's set-up (clocks, plans, the start margin) comes on top.
struct PlanLength {
  std::chrono::milliseconds least{0};
  std::chrono::milliseconds most{0};  // differs from least where a search may stop early
};
PlanLength plan_length(const Profile& profile, const ExpandedPlan& plan);

// Throws PlanError when a test's topology does not fit the agents.
ExpandedPlan expand_plan(const Profile& profile, const std::vector<std::string>& agents, const std::string& run_id);

std::string plan_text(const Profile& profile, const ExpandedPlan& plan);
nlohmann::json plan_json(const Profile& profile, const ExpandedPlan& plan);

}  // namespace tusk
