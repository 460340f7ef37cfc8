// From a validated profile and the agents at hand to what each agent must do: which agents a run
// uses, and each one's share of each test (its Plan, with its peers and the safety caps).
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "controller/profile/profile.hpp"
#include "tusk.pb.h"

namespace tusk {

// A profile that cannot be planned on these agents (odd count for pairs, missing engine, ...).
class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct AgentSelection {
  std::vector<std::string> chosen;   // sorted by name
  std::vector<std::string> missing;  // named hosts not (yet) registered
  bool complete = false;             // every named host is present and the count is met
  std::string shortfall;             // why it is not complete, for the error message
};

// `available` is every registered agent's name. Hosts and patterns are unioned, then `count`
// takes the first that many (sorted by name); without hosts or patterns, count takes any agents.
AgentSelection select_agents(const AgentSelector& selector, std::vector<std::string> available);

struct AgentPlan {
  std::string agent;
  proto::Plan plan;
};

// Tells every agent each peer's and sender's clock relative to its own (PeerEndpoint.clock_offset_ns)
// from each agent's clock minus the controller's. A pair where either clock is unknown stays 0, and
// so does a pair on one host (same `hosts` entry): one clock, whose two estimates differ only by
// their errors.
void set_peer_clock_offsets(std::vector<AgentPlan>& plans, const std::map<std::string, std::int64_t>& offset_ns,
                            const std::map<std::string, std::string>& hosts = {});

// One Plan per agent for test `test_index`. Throws PlanError when the topology does not fit.
// `step_peers` (a schedule's step, by agent index) replaces the topology's peers.
std::vector<AgentPlan> plan_test(const Profile& profile, std::size_t test_index, const std::vector<std::string>& agents,
                                 const std::string& run_id,
                                 const std::vector<std::vector<std::size_t>>* step_peers = nullptr);

// Agents that lack the engine a test needs, as "agent: reason" lines (empty when all have it).
std::vector<std::string> missing_engines(const Profile& profile, const std::vector<proto::Inventory>& inventories,
                                         const std::vector<std::string>& names);

std::string make_run_id();

// The data-plane address an agent with inventory `from` should use to reach `to` with `engine`
// (the engine's slice decides: a MAC, an IP, ...). "" if none.
std::string data_plane_address(const std::string& engine, const proto::Inventory& from, const proto::Inventory& to);
// The address `inventory`'s agent sends `engine`'s traffic from (its IPv4 where the engine routes),
// as a topology file lists hosts by. "" if none.
std::string own_data_plane_address(const std::string& engine, const proto::Inventory& inventory);
// Fills `peer`'s data-plane address (and IPv4 address, for engines that route) as `from` sees `to`.
void describe_peer(const std::string& engine, const proto::Inventory& from, const proto::Inventory& to,
                   proto::PeerEndpoint& peer);
// Every peer's and sender's data-plane address in `plan`, and what else of the agents' inventories
// its engine needs (an RDMA test's rails). Throws PlanError naming what an agent lacks.
void describe_plan(AgentPlan& plan, const std::map<std::string, proto::Inventory>& inventories);

}  // namespace tusk
