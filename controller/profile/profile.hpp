// The validated, typed form of a YAML profile. Produced only by profile_loader; every value here
// has already been range-checked, so the planner and the run never re-validate.
#pragma once

#include <any>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/source_pos.hpp"

namespace tusk {

// Which registered agents a run uses. Hosts and patterns are unioned; count then takes that many
// of the matches (sorted by name), or that many of all agents when no hosts/patterns are given.
struct AgentSelector {
  std::vector<std::string> hosts;     // exact agent names
  std::vector<std::string> patterns;  // shell globs over agent names, e.g. "rack1-gpu*"
  std::optional<std::uint32_t> count;
  std::chrono::milliseconds wait{std::chrono::seconds(60)};  // how long `run` waits for them
};

// Upper bounds that no test of the profile may exceed; the agents enforce them too.
struct SafetyCaps {
  double max_rate_bps = 0;  // 0: no cap
  std::chrono::milliseconds max_duration{std::chrono::hours(24)};
};

enum class Bound { Max, Min };

// One pass/fail rule, e.g. `max_ber: 1e-12` becomes {key "max_ber", metric "ber", Max, 1e-12}.
struct Threshold {
  std::string key;     // as written in the profile
  std::string metric;  // the metric the verdict computes (see threshold_catalog)
  Bound bound = Bound::Max;
  double value = 0;
  SourcePos pos;
  bool implicit = false;  // a safe default (threshold_catalog), not written in the profile
};

// How the selected agents are paired for a test.
enum class Topology {
  Loopback,  // each agent alone: port A to port B of one host
  Pairs,     // agents in name order, 0↔1, 2↔3, ...
  Ring,      // agent i sends to agent i+1 (mod n)
  Mesh,      // every agent to every other agent
  Pipeline,  // a chain: agent i sends to agent i+1, the last to nobody (pipeline stages)
  Incast,    // every other agent sends to agent 0 (checkpoint writes to a storage host)
  Permutation,  // agent i sends to agent i + n/2 (mod n): every flow crosses the bisection
};

struct TestSpec {
  std::string name;
  std::string engine;  // an engine of the table in controller/engines/
  std::chrono::milliseconds duration{0};
  std::chrono::milliseconds sample_interval{std::chrono::seconds(1)};
  Topology topology = Topology::Pairs;
  // The engine's own parameters, whatever type its slice keeps them in: only that slice reads or
  // writes them (controller/engines/<engine>/), so no other code names an engine's parameters.
  std::any params;
  std::vector<Threshold> thresholds;
  SourcePos pos;
};

struct Profile {
  std::string file;
  std::string name;
  std::string description;
  std::string source;  // the YAML as loaded: the reports show the profile as run
  AgentSelector agents;
  SafetyCaps safety;
  std::vector<TestSpec> tests;
};

std::string_view to_string(Topology topology);

}  // namespace tusk
