// Shift schedules: every ordered pair exactly once, groups that keep every flow out of (or in) its
// rack, leaves read from a topology file, rails kept NIC r to NIC r, and the profile keys' errors.
#include "controller/plan/shift_schedule.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>
#include <utility>

#include "controller/engines/rdma/rdma_slice.hpp"
#include "controller/method/method_steps.hpp"
#include "controller/plan/planner.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/topology/fabric_topology.hpp"
#include "tests/support/leaf_spine_model.hpp"
#include "tests/support/yaml_errors.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;
using Pair = std::pair<std::size_t, std::size_t>;

ShiftSpec shift_spec(ShiftSpec::GroupBy group_by = ShiftSpec::GroupBy::None,
                     ShiftSpec::Scope scope = ShiftSpec::Scope::Cross) {
  ShiftSpec spec;
  spec.group_by = group_by;
  spec.scope = scope;
  return spec;
}

// Every (sender, receiver) of every step, counted.
std::map<Pair, int> pairs_of(const ShiftSpec& spec, std::size_t agents, const ShiftGroups& groups) {
  std::map<Pair, int> seen;
  for (const auto k : shift_numbers(spec, agents, groups, "t")) {
    const ShiftStep step = shift_step(spec, agents, groups, k);
    EXPECT_EQ(step.peers.size(), agents);
    for (std::size_t i = 0; i < agents; ++i) {
      for (const auto peer : step.peers[i]) ++seen[{i, peer}];
    }
  }
  return seen;
}

// Groups of the given sizes over consecutive agents: {3, 1} is agents 0-2 in g0, agent 3 in g1.
ShiftGroups groups_of(std::initializer_list<std::size_t> sizes) {
  ShiftGroups groups;
  std::size_t next = 0;
  for (const auto size : sizes) {
    groups.names.push_back(fmt::format("g{}", groups.names.size()));
    groups.members.emplace_back();
    for (std::size_t m = 0; m < size; ++m) groups.members.back().push_back(next++);
  }
  return groups;
}

std::size_t group_of(const ShiftGroups& groups, std::size_t agent) {
  for (std::size_t g = 0; g < groups.members.size(); ++g) {
    for (const auto member : groups.members[g]) {
      if (member == agent) return g;
    }
  }
  return groups.members.size();
}

TEST(ShiftSchedule, AllShiftsCoverEveryOrderedPairExactlyOnceAndEachStepIsAPermutation) {
  for (const std::size_t n : {2u, 3u, 5u, 8u, 17u, 64u}) {
    const ShiftSpec spec = shift_spec();
    EXPECT_EQ(shift_step_count(spec, n, {}), n - 1);
    const auto seen = pairs_of(spec, n, {});
    EXPECT_EQ(seen.size(), n * (n - 1)) << n << " agents";
    for (const auto& [pair, count] : seen) {
      EXPECT_NE(pair.first, pair.second);
      EXPECT_EQ(count, 1) << n << " agents: " << pair.first << " -> " << pair.second;
    }
    for (std::uint32_t k = 1; k < n; ++k) {
      const ShiftStep step = shift_step(spec, n, {}, k);
      std::set<std::size_t> receivers;
      for (const auto& peers : step.peers) {
        ASSERT_EQ(peers.size(), 1u);
        receivers.insert(peers.front());
      }
      EXPECT_EQ(receivers.size(), n) << "step " << k << " of " << n << ": every agent receives once";
    }
  }
}

TEST(ShiftSchedule, ChosenShiftsRunThoseStepsAndOnePastTheEndIsRefused) {
  ShiftSpec spec = shift_spec();
  spec.shifts = {1, 4};
  spec.shifts_text = "[1, 4]";
  EXPECT_EQ(shift_numbers(spec, 5, {}, "t"), (std::vector<std::uint32_t>{1, 4}));
  EXPECT_EQ(shift_step(spec, 5, {}, 4).peers[2], std::vector<std::size_t>{1});  // 2 + 4 mod 5
  try {
    shift_numbers(spec, 4, {}, "burn-in");
    FAIL() << "step 4 of a 3-step schedule ran";
  } catch (const PlanError& e) {
    EXPECT_STREQ(e.what(), "test 'burn-in': shifts [1, 4] names step 4, but the schedule over 4 agents has 3 steps");
  }
}

TEST(ShiftSchedule, CrossScopeNeverKeepsAFlowInItsGroupAndCoversEveryCrossPairOnce) {
  for (const auto& groups : {groups_of({2, 2, 2}), groups_of({3, 3, 2, 1}), groups_of({1, 4}), groups_of({5, 5})}) {
    const ShiftSpec spec = shift_spec(ShiftSpec::GroupBy::Leaf);
    std::size_t agents = 0, cross = 0;
    for (const auto& members : groups.members) agents += members.size();
    for (const auto& a : groups.members) cross += a.size() * (agents - a.size());
    const auto seen = pairs_of(spec, agents, groups);
    EXPECT_EQ(seen.size(), cross);
    for (const auto& [pair, count] : seen) {
      EXPECT_NE(group_of(groups, pair.first), group_of(groups, pair.second))
          << pair.first << " -> " << pair.second << " stayed in its group";
      EXPECT_EQ(count, 1) << pair.first << " -> " << pair.second;
    }
  }
}

TEST(ShiftSchedule, RackScopeStaysInEachGroupAndCoversItsPairsOnce) {
  const ShiftGroups groups = groups_of({3, 1, 4});
  const ShiftSpec spec = shift_spec(ShiftSpec::GroupBy::Listed, ShiftSpec::Scope::Rack);
  EXPECT_EQ(shift_step_count(spec, 8, groups), 3u);
  const auto seen = pairs_of(spec, 8, groups);
  EXPECT_EQ(seen.size(), 3u * 2 + 4u * 3);
  for (const auto& [pair, count] : seen) {
    EXPECT_EQ(group_of(groups, pair.first), group_of(groups, pair.second));
    EXPECT_EQ(count, 1);
  }
  EXPECT_EQ(shift_step(spec, 8, groups, 1).label, "within each group, member +1");
}

TEST(ShiftSchedule, OneGroupHasNoCrossStepAndSaysWhy) {
  try {
    shift_numbers(shift_spec(ShiftSpec::GroupBy::Leaf), 4, groups_of({4}), "burn-in");
    FAIL() << "a schedule with no step";
  } catch (const PlanError& e) {
    EXPECT_THAT(e.what(), HasSubstr("in 1 leafs has no step: scope cross needs at least 2 leafs"));
  }
}

TEST(ShiftGroups, LeavesComeFromTheTopologyFileAndAnUnplacedAgentIsNamed) {
  const testing::LeafSpineShape fabric{3, 2, 2, 8};
  const FabricTopology topology = testing::lab_topology(fabric);
  std::vector<std::string> agents;
  std::map<std::string, std::string> address;
  for (const auto& host : testing::model_hosts(fabric)) {
    agents.push_back(host.agent);
    address[host.agent] = testing::host_address(host.leaf, host.host);
  }
  const auto leaf_of = [&](const std::string& agent) { return topology.attached_to(address[agent]); };
  const ShiftGroups groups = group_agents(agents, leaf_of, "no leaf");
  EXPECT_EQ(groups.names, (std::vector<std::string>{"l1", "l2", "l3"}));
  EXPECT_EQ(groups.members[1], (std::vector<std::size_t>{2, 3}));
  // 3 leaves of 2: 2 group shifts x 2 member shifts; every flow crosses a spine.
  EXPECT_EQ(shift_step_count(shift_spec(ShiftSpec::GroupBy::Leaf), agents.size(), groups), 4u);

  agents.push_back("stray");
  address["stray"] = "10.9.9.9";
  try {
    group_agents(agents, leaf_of, "the topology file places no cable at");
    FAIL() << "an agent with no leaf was grouped";
  } catch (const PlanError& e) {
    EXPECT_STREQ(e.what(), "the topology file places no cable at: stray");
  }
}

TEST(ShiftGroups, AListedGroupByLeavingAnAgentOutIsRefused) {
  ShiftSpec spec = shift_spec(ShiftSpec::GroupBy::Listed);
  spec.groups = {{"a", "r1"}, {"b", "r2"}};
  EXPECT_EQ(listed_groups(spec, {"a", "b"}).names, (std::vector<std::string>{"r1", "r2"}));
  EXPECT_THROW(listed_groups(spec, {"a", "b", "c"}), PlanError);
}

Profile load(const std::string& test_keys, const std::string& agents = "{count: 4}") {
  return load_profile_text(testing::text_of("name: burn-in\nagents: " + agents +
                                            "\ntests:\n  - name: all-pairs\n    engine: rdma\n" + test_keys),
                           "burn.yaml");
}

std::string load_error(const std::string& test_keys, const std::string& agents = "{count: 4}") {
  try {
    load(test_keys, agents);
  } catch (const ProfileInvalid& e) {
    return e.what();
  }
  return "loaded";
}

TEST(ShiftKeys, AShiftTestIsAScheduleOfStepsEachAsLongAsItsStep) {
  const Profile profile =
      load("    topology: shift\n    shifts: 1..2\n    step: 5s\n    thresholds: {min_link_coverage: 100%}\n");
  const TestSpec& test = profile.tests.front();
  ASSERT_TRUE(test.method && test.shift);
  EXPECT_EQ(test.method->kind, MethodKind::Shift);
  EXPECT_EQ(test.method->trial, std::chrono::seconds(5));
  EXPECT_EQ(test.shift->shifts, (std::vector<std::uint32_t>{1, 2}));
  MethodSteps steps(test, 4);
  const auto planned = steps.fixed_steps();
  ASSERT_TRUE(planned);
  ASSERT_EQ(planned->size(), 2u);
  EXPECT_EQ((*planned)[1].spec.name, "all-pairs [shift 2]");
  EXPECT_EQ((*planned)[1].spec.duration, std::chrono::seconds(5));
  EXPECT_EQ((*planned)[1].peers[3], std::vector<std::size_t>{1});
  EXPECT_EQ(test.min_link_coverage, 1.0);
  EXPECT_FALSE((*planned)[1].spec.min_link_coverage) << "a step covers a part by design: coverage is the schedule's";
}

TEST(ShiftKeys, MistakesAreNamedWithTheirField) {
  EXPECT_THAT(load_error("    duration: 5s\n    topology: ring\n    shifts: all\n"),
              HasSubstr("burn.yaml:8:13: tests[0].shifts: shifts belongs to topology: shift"));
  EXPECT_THAT(load_error("    duration: 5s\n    topology: shift\n    scope: rack\n"),
              HasSubstr("tests[0].scope: scope says whether steps cross groups or stay in them: give group_by"));
  EXPECT_THAT(load_error("    duration: 5s\n    topology: shift\n    shifts: [1, 4]\n"),
              HasSubstr("tests[0].shifts: shifts [1, 4] names step 4, but 4 agents have 3 steps (1..3)"));
  EXPECT_THAT(load_error("    duration: 5s\n    step: 2s\n    topology: shift\n"),
              HasSubstr("tests[0].step: step is each step's duration, and so is a shift test's duration"));
  EXPECT_THAT(load_error("    duration: 5s\n    topology: shift\n    shifts: 0..3\n"), HasSubstr("shifts '0..3'"));
  EXPECT_THAT(load_error("    duration: 5s\n    topology: shift\n    group_by: spine\n"),
              HasSubstr("tests[0].group_by"));
  EXPECT_THAT(load_error("    duration: 5s\n    topology: shift\n    method: {kind: sweep}\n"),
              HasSubstr("topology: shift runs its own steps"));
  EXPECT_THAT(load_error("    duration: 5s\n    topology: shift\n    thresholds: {min_link_coverage: 120%}\n"),
              HasSubstr("min_link_coverage"));
}

TEST(ShiftKeys, AGroupByListGroupsTheAgentsItNames) {
  const Profile profile =
      load("    step: 2s\n    topology: shift\n    group_by: {a: r1, b: r1, c: r2, d: r2}\n    scope: rack\n",
           "{hosts: [a, b, c, d]}");
  const TestSpec& test = profile.tests.front();
  const ShiftGroups groups = listed_groups(*test.shift, {"a", "b", "c", "d"});
  MethodSteps steps(test, 4, groups);
  const auto planned = steps.fixed_steps();
  ASSERT_TRUE(planned);
  ASSERT_EQ(planned->size(), 1u);
  EXPECT_EQ((*planned)[0].peers, (std::vector<std::vector<std::size_t>>{{1}, {0}, {3}, {2}}));
}

// Rails on a schedule: at every step each agent's rail r goes to its peer's rail r.
TEST(ShiftRails, EveryStepPairsNicRWithThePeersNicR) {
  const Profile profile = load("    step: 2s\n    topology: shift\n    rails: 2\n", "{hosts: [a, b, c]}");
  std::map<std::string, proto::Inventory> inventories;
  for (const char* agent : {"a", "b", "c"}) {
    for (int r = 0; r < 2; ++r) {
      auto* device = inventories[agent].add_rdma_devices();
      device->set_name(fmt::format("mlx5_{}", r));
      auto* gid = device->add_ports()->add_gids();
      gid->set_ip(fmt::format("10.{}.0.{}", r, agent[0] - 'a' + 1));
      gid->set_type("RoCE v2");
    }
  }
  const std::vector<std::string> agents{"a", "b", "c"};
  MethodSteps steps(profile.tests.front(), agents.size());
  const auto planned = steps.fixed_steps();
  ASSERT_TRUE(planned);
  ASSERT_EQ(planned->size(), 2u);
  for (const auto& step : *planned) {
    Profile with_step = profile;
    with_step.tests.push_back(step.spec);
    auto plans = plan_test(with_step, 1, agents, "run", &step.peers);
    for (std::size_t i = 0; i < plans.size(); ++i) {
      describe_plan(plans[i], inventories);
      const auto& plan = plans[i].plan;
      ASSERT_EQ(plan.peers_size(), 1);
      const char peer = plan.peers(0).agent_name()[0];
      EXPECT_EQ(plan.peers(0).agent_name(), agents[step.peers[i].front()]);
      for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(plan.rdma().rail_endpoints(r).device(), fmt::format("mlx5_{}", r));
        EXPECT_EQ(plan.peers(0).rail_addresses(r), fmt::format("10.{}.0.{}", r, peer - 'a' + 1))
            << step.spec.name << ": " << agents[i] << " rail " << r;
      }
    }
  }
}

}  // namespace
}  // namespace tusk
