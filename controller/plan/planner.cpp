#include "controller/plan/planner.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <ctime>
#include <random>
#include <set>
#include <string_view>

#include "common/did_you_mean.hpp"
#include "controller/engines/engine_slice.hpp"

namespace tusk {

AgentSelection select_agents(const AgentSelector& selector, std::vector<std::string> available) {
  std::sort(available.begin(), available.end());
  AgentSelection selection;
  const bool by_name = !selector.hosts.empty() || !selector.patterns.empty();
  std::set<std::string> matched;
  for (const auto& host : selector.hosts) {
    if (std::binary_search(available.begin(), available.end(), host)) {
      matched.insert(host);
    } else {
      selection.missing.push_back(host);
    }
  }
  for (const auto& name : available) {
    for (const auto& pattern : selector.patterns) {
      if (fnmatch(pattern.c_str(), name.c_str(), 0) == 0) matched.insert(name);
    }
  }
  std::vector<std::string> candidates = by_name ? std::vector<std::string>(matched.begin(), matched.end()) : available;
  if (selector.count && candidates.size() > *selector.count) candidates.resize(*selector.count);
  selection.chosen = std::move(candidates);

  // Who is there but not selected: a host name mistyped in the profile (or on the agent) shows here.
  std::vector<std::string> unused;
  if (by_name) {
    for (const auto& name : available) {
      if (!matched.contains(name)) unused.push_back(name);
    }
  }
  const auto registered = [&] {
    return selection.chosen.empty() ? std::string("none of them registered")
                                    : fmt::format("registered: {}", fmt::join(selection.chosen, ", "));
  };
  if (!selection.missing.empty()) {
    selection.shortfall = fmt::format("not registered: {}; {}", fmt::join(selection.missing, ", "), registered());
  } else if (selector.count && selection.chosen.size() < *selector.count) {
    selection.shortfall =
        fmt::format("{} of {} agents registered{}", selection.chosen.size(), *selector.count,
                    selection.chosen.empty() ? "" : fmt::format(": {}", fmt::join(selection.chosen, ", ")));
  } else if (selection.chosen.empty()) {
    selection.shortfall = "no agent matches the profile's selection";
  }
  if (!selection.shortfall.empty() && !unused.empty()) {
    std::vector<std::string> named;
    const std::vector<std::string_view> missing(selection.missing.begin(), selection.missing.end());
    for (const auto& name : unused) {
      const auto meant = closest_match(name, missing);
      named.push_back(meant ? fmt::format("{} (for {}?)", name, *meant) : name);
    }
    selection.shortfall += fmt::format("; connected but not in the profile: {}", fmt::join(named, ", "));
  }
  selection.complete = selection.shortfall.empty();
  return selection;
}

namespace {

// Who each agent exchanges traffic with, by topology.
std::vector<std::vector<std::size_t>> peers_by_topology(Topology topology, std::size_t n, const std::string& test) {
  std::vector<std::vector<std::size_t>> peers(n);
  switch (topology) {
    case Topology::Loopback:
      break;
    case Topology::Pairs:
      if (n % 2 != 0) {
        throw PlanError(
            fmt::format("test '{}': topology 'pairs' needs an even number of agents, {} selected", test, n));
      }
      for (std::size_t i = 0; i < n; i += 2) {
        peers[i].push_back(i + 1);
        peers[i + 1].push_back(i);
      }
      break;
    case Topology::Ring:
      if (n < 2) throw PlanError(fmt::format("test '{}': topology 'ring' needs at least 2 agents", test));
      for (std::size_t i = 0; i < n; ++i) peers[i].push_back((i + 1) % n);
      break;
    case Topology::Pipeline:
      if (n < 2) throw PlanError(fmt::format("test '{}': topology 'pipeline' needs at least 2 agents", test));
      for (std::size_t i = 0; i + 1 < n; ++i) peers[i].push_back(i + 1);
      break;
    case Topology::Incast:
      if (n < 2) throw PlanError(fmt::format("test '{}': topology 'incast' needs at least 2 agents", test));
      for (std::size_t i = 1; i < n; ++i) peers[i].push_back(0);
      break;
    case Topology::Permutation:
      if (n < 2 || n % 2 != 0) {
        throw PlanError(
            fmt::format("test '{}': topology 'permutation' needs an even number of agents, {} selected", test, n));
      }
      for (std::size_t i = 0; i < n; ++i) peers[i].push_back((i + n / 2) % n);
      break;
    case Topology::Congestion:
      if (n < 4)
        throw PlanError(fmt::format("test '{}': RFC 2889 congestion control needs 4 agents, {} selected", test, n));
      peers[2] = {0, 1};
      peers[3] = {0};
      break;
    case Topology::Shift:
      // Planned step by step (shift_schedule); the test's own plan, as `plan` prints it, is the
      // shape of every step: each agent to one peer (here the first step's, without groups).
      if (n < 2) throw PlanError(fmt::format("test '{}': topology 'shift' needs at least 2 agents", test));
      for (std::size_t i = 0; i < n; ++i) peers[i].push_back((i + 1) % n);
      break;
    case Topology::Mesh:
      if (n < 2) throw PlanError(fmt::format("test '{}': topology 'mesh' needs at least 2 agents", test));
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
          if (i != j) peers[i].push_back(j);
        }
      }
      break;
  }
  return peers;
}

}  // namespace

std::vector<AgentPlan> plan_test(const Profile& profile, std::size_t test_index, const std::vector<std::string>& agents,
                                 const std::string& run_id, const std::vector<std::vector<std::size_t>>* step_peers) {
  const TestSpec& test = profile.tests.at(test_index);
  if (step_peers && step_peers->size() != agents.size()) {
    throw PlanError(fmt::format("test '{}': the step names peers for {} agents, the run has {}", test.name,
                                step_peers->size(), agents.size()));
  }
  const auto peers = step_peers ? *step_peers : peers_by_topology(test.topology, agents.size(), test.name);
  std::vector<AgentPlan> plans;
  plans.reserve(agents.size());
  for (std::size_t i = 0; i < agents.size(); ++i) {
    AgentPlan agent_plan;
    agent_plan.agent = agents[i];
    proto::Plan& plan = agent_plan.plan;
    plan.set_run_id(run_id);
    plan.set_test_index(static_cast<std::int32_t>(test_index));
    plan.set_test_name(test.name);
    plan.set_engine(test.engine);
    plan.set_duration_ms(static_cast<std::uint32_t>(test.duration.count()));
    plan.set_sample_interval_ms(static_cast<std::uint32_t>(test.sample_interval.count()));
    plan.set_read_optics(test.optics.read);
    if (test.optics.read) plan.set_optics_interval_ms(static_cast<std::uint32_t>(test.optics.interval.count()));
    plan.set_max_rate_bps(profile.safety.max_rate_bps);
    plan.set_max_duration_ms(static_cast<std::uint32_t>(profile.safety.max_duration.count()));
    for (std::size_t peer : peers[i]) plan.add_peers()->set_agent_name(agents[peer]);
    if (const EngineSlice* engine = find_engine(test.engine)) engine->complete_plan(profile, test, agents.size(), plan);
    plans.push_back(std::move(agent_plan));
  }
  for (std::size_t i = 0; i < agents.size(); ++i) {
    for (std::size_t peer : peers[i]) plans[peer].plan.add_senders()->set_agent_name(agents[i]);
  }
  return plans;
}

std::vector<std::string> missing_engines(const Profile& profile, const std::vector<proto::Inventory>& inventories,
                                         const std::vector<std::string>& names) {
  std::vector<std::string> problems;
  std::set<std::string> needed;
  for (const auto& test : profile.tests) needed.insert(test.engine);
  for (std::size_t i = 0; i < inventories.size(); ++i) {
    const auto& engines = inventories[i].engines();
    for (const auto& engine : needed) {
      if (std::find(engines.begin(), engines.end(), engine) != engines.end()) continue;
      std::string why =
          inventories[i].notes().empty() ? "" : fmt::format(" ({})", fmt::join(inventories[i].notes(), "; "));
      problems.push_back(fmt::format("{}: has no {} engine{}", names[i], engine, why));
    }
  }
  return problems;
}

std::string data_plane_address(const std::string& engine, const proto::Inventory& from, const proto::Inventory& to) {
  const EngineSlice* slice = find_engine(engine);
  return slice ? slice->data_plane_address(from, to) : "";
}

std::string own_data_plane_address(const std::string& engine, const proto::Inventory& inventory) {
  const EngineSlice* slice = find_engine(engine);
  if (!slice) return "";
  return slice->data_plane_ipv4 ? slice->data_plane_ipv4(inventory, inventory)
                                : slice->data_plane_address(inventory, inventory);
}

void describe_peer(const std::string& engine, const proto::Inventory& from, const proto::Inventory& to,
                   proto::PeerEndpoint& peer) {
  const EngineSlice* slice = find_engine(engine);
  if (!slice) return;
  peer.set_address(slice->data_plane_address(from, to));
  if (slice->data_plane_ipv4) peer.set_ipv4(slice->data_plane_ipv4(from, to));
}

void describe_plan(AgentPlan& agent_plan, const std::map<std::string, proto::Inventory>& inventories) {
  proto::Plan& plan = agent_plan.plan;
  const auto inventory = [&inventories](const std::string& name) -> const proto::Inventory& {
    const auto it = inventories.find(name);
    if (it == inventories.end()) throw PlanError(fmt::format("agent {} has not registered an inventory", name));
    return it->second;
  };
  for (auto* endpoints : {plan.mutable_peers(), plan.mutable_senders()}) {
    for (auto& peer : *endpoints)
      describe_peer(plan.engine(), inventory(agent_plan.agent), inventory(peer.agent_name()), peer);
  }
  const EngineSlice* slice = find_engine(plan.engine());
  if (slice && slice->bind_inventories) {
    if (auto problem = slice->bind_inventories(plan, agent_plan.agent, inventories); !problem.empty()) {
      throw PlanError(fmt::format("test {}: {}", plan.test_name(), problem));
    }
  }
}

std::string make_run_id() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &utc);
  std::mt19937 random(std::random_device{}());
  return fmt::format("{}-{:04x}", stamp, random() & 0xffff);
}

void set_peer_clock_offsets(std::vector<AgentPlan>& plans, const std::map<std::string, std::int64_t>& offset_ns,
                            const std::map<std::string, std::string>& hosts) {
  const auto same_host = [&hosts](const std::string& a, const std::string& b) {
    const auto host_a = hosts.find(a), host_b = hosts.find(b);
    return host_a != hosts.end() && host_b != hosts.end() && !host_a->second.empty() &&
           host_a->second == host_b->second;
  };
  for (auto& agent_plan : plans) {
    const auto own = offset_ns.find(agent_plan.agent);
    if (own == offset_ns.end()) continue;
    for (auto* endpoints : {agent_plan.plan.mutable_peers(), agent_plan.plan.mutable_senders()}) {
      for (auto& peer : *endpoints) {
        const auto theirs = offset_ns.find(peer.agent_name());
        const bool known = theirs != offset_ns.end() && !same_host(agent_plan.agent, peer.agent_name());
        peer.set_clock_offset_ns(known ? theirs->second - own->second : 0);
      }
    }
  }
}

}  // namespace tusk
