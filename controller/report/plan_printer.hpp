// `tusk-controller plan`: the expanded per-agent plan, for people and for programs.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "controller/plan/planner.hpp"
#include "controller/profile/profile.hpp"
#include "controller/topology/fabric_topology.hpp"

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
  std::vector<Threshold> thresholds;               // what every step is judged on (MethodSteps::step_thresholds)
  // A shift schedule's steps: who sends to whom at each (sender, receiver), the first
  // kMaxListedPairs of the whole schedule; pairs_in_all counts every one.
  std::vector<std::vector<std::pair<std::string, std::string>>> pairs;
  std::size_t pairs_in_all = 0;
};

// The most sender-receiver pairs `plan` lists for a schedule (a schedule of 4,096 agents has 16 M).
inline constexpr std::size_t kMaxListedPairs = 10000;

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

// Throws PlanError when a test's topology does not fit the agents. `topology` (may be null) places
// the agents for a schedule grouped by leaf: each agent by the topology's host of its name.
ExpandedPlan expand_plan(const Profile& profile, const std::vector<std::string>& agents, const std::string& run_id,
                         const FabricTopology* topology = nullptr);

std::string plan_text(const Profile& profile, const ExpandedPlan& plan);
nlohmann::json plan_json(const Profile& profile, const ExpandedPlan& plan);

}  // namespace tusk
