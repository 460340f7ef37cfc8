#include "controller/plan/planner.hpp"

#include "controller/engines/dpdk/dpdk_slice.hpp"
#include "controller/engines/rdma/collective.hpp"
#include "controller/engines/rdma/rdma_slice.hpp"
#include "controller/report/plan_printer.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

namespace tusk {
namespace {

using namespace std::chrono_literals;
using Names = std::vector<std::string>;

// ---- helpers ---------------------------------------------------------------------------------

AgentSelector hosts(Names names) {
  AgentSelector selector;
  selector.hosts = std::move(names);
  return selector;
}

AgentSelector patterns(Names globs) {
  AgentSelector selector;
  selector.patterns = std::move(globs);
  return selector;
}

TestSpec rdma_test(std::string name, Topology topology) {
  TestSpec test;
  test.name = std::move(name);
  test.engine = "rdma";
  test.duration = 10s;
  test.topology = topology;
  rdma::params(test).set_device("mlx5_0");
  rdma::params(test).set_operation("write");
  return test;
}

TestSpec dpdk_test(std::string name, Topology topology) {
  TestSpec test;
  test.name = std::move(name);
  test.engine = "dpdk";
  test.duration = 10s;
  test.topology = topology;
  dpdk::params(test).set_port("0000:3b:00.0");
  dpdk::params(test).set_frame_size(1514);
  return test;
}

Profile profile_with(TestSpec test) {
  Profile profile;
  profile.name = "unit";
  profile.tests.push_back(std::move(test));
  return profile;
}

// Peer names of one plan, in the order the planner wrote them.
Names peers_of(const AgentPlan& agent_plan) {
  Names names;
  for (const auto& peer : agent_plan.plan.peers()) names.push_back(peer.agent_name());
  return names;
}

Names agents_of(const std::vector<AgentPlan>& plans) {
  Names names;
  for (const auto& plan : plans) names.push_back(plan.agent);
  return names;
}

proto::Inventory inventory(Names engines, Names notes = {}) {
  proto::Inventory inv;
  for (const auto& engine : engines) inv.add_engines(engine);
  for (const auto& note : notes) inv.add_notes(note);
  return inv;
}

// ---- select_agents: which agents -------------------------------------------------------------

TEST(Planner, HostsAreMatchedExactly) {
  const auto selection = select_agents(hosts({"b"}), {"c", "a", "b", "bb"});
  EXPECT_EQ(selection.chosen, (Names{"b"}));
  EXPECT_TRUE(selection.missing.empty());
  EXPECT_TRUE(selection.complete);
  EXPECT_EQ(selection.shortfall, "");
}

TEST(Planner, AHostIsNotAPrefixOrPattern) {
  // "gpu1" must not pick "gpu10", and "gpu*" as a host is a literal name, not a glob.
  const auto selection = select_agents(hosts({"gpu1", "gpu*"}), {"gpu10", "gpu11"});
  EXPECT_TRUE(selection.chosen.empty());
  EXPECT_EQ(selection.missing, (Names{"gpu1", "gpu*"}));
  EXPECT_FALSE(selection.complete);
}

TEST(Planner, PatternsAreShellGlobs) {
  const Names available{"rack2-a", "rack1-b", "rack1-a", "rack10-a", "xrack1-c"};
  EXPECT_EQ(select_agents(patterns({"rack1-*"}), available).chosen, (Names{"rack1-a", "rack1-b"}));
  // '?' is exactly one character: rack1-a, rack1-b, rack2-a but not rack10-a.
  EXPECT_EQ(select_agents(patterns({"rack?-a"}), available).chosen, (Names{"rack1-a", "rack2-a"}));
  // Bracket expressions.
  EXPECT_EQ(select_agents(patterns({"rack[2-9]-*"}), available).chosen, (Names{"rack2-a"}));
  // A glob must match the whole name, not a substring.
  EXPECT_EQ(select_agents(patterns({"rack1"}), available).chosen, Names{});
}

TEST(Planner, HostsAndPatternsAreUnionedSortedAndWithoutDuplicates) {
  AgentSelector selector;
  selector.hosts = {"zeta", "rack1-a"};  // rack1-a is matched by the pattern too
  selector.patterns = {"rack1-*", "rack1-?"};
  const auto selection = select_agents(selector, {"rack1-b", "zeta", "rack2-a", "rack1-a", "alpha"});
  EXPECT_EQ(selection.chosen, (Names{"rack1-a", "rack1-b", "zeta"}));
  EXPECT_TRUE(selection.complete);
}

TEST(Planner, CountTakesTheFirstMatchesByName) {
  AgentSelector selector = patterns({"n*"});
  selector.count = 2;
  // Matches sorted: n1 n2 n3 n4 -> first two.
  const auto selection = select_agents(selector, {"n3", "n1", "m0", "n4", "n2"});
  EXPECT_EQ(selection.chosen, (Names{"n1", "n2"}));
  EXPECT_TRUE(selection.complete);
}

TEST(Planner, CountWithoutHostsOrPatternsTakesAnyAgents) {
  AgentSelector selector;
  selector.count = 3;
  const auto selection = select_agents(selector, {"d", "c", "b", "a"});
  EXPECT_EQ(selection.chosen, (Names{"a", "b", "c"}));
  EXPECT_TRUE(selection.complete);
  EXPECT_EQ(selection.shortfall, "");
}

TEST(Planner, NoSelectorAtAllTakesEveryAgentSorted) {
  const auto selection = select_agents(AgentSelector{}, {"c", "a", "b"});
  EXPECT_EQ(selection.chosen, (Names{"a", "b", "c"}));
  EXPECT_TRUE(selection.complete);
}

TEST(Planner, MissingHostsAreListedAndMakeTheSelectionIncomplete) {
  const auto selection = select_agents(hosts({"a", "x", "y"}), {"a", "b"});
  EXPECT_EQ(selection.chosen, (Names{"a"}));
  EXPECT_EQ(selection.missing, (Names{"x", "y"}));
  EXPECT_FALSE(selection.complete);
  EXPECT_EQ(selection.shortfall, "not registered: x, y; registered: a; connected but not in the profile: b (for x?)");
}

// Before: "2 of 4 agents registered" named none of them, and a host name mistyped in the profile
// never said which connected agent went unused.
TEST(Planner, AShortfallNamesWhoRegisteredAndTheConnectedAgentsTheProfileDidNotName) {
  const auto selection = select_agents(hosts({"rack1-gpu01", "rack1-gpu02", "rack1-gpu03"}),
                                       {"rack1-gpu01", "rack1-gpu02", "rack1-gpu3", "spare"});
  EXPECT_EQ(selection.shortfall,
            "not registered: rack1-gpu03; registered: rack1-gpu01, rack1-gpu02; connected but not in the profile: "
            "rack1-gpu3 (for rack1-gpu03?), spare");
}

TEST(Planner, CountNotMetIsIncomplete) {
  AgentSelector selector = patterns({"n*"});
  selector.count = 3;
  // Only n1 and n2 match: 2 of 3.
  const auto selection = select_agents(selector, {"n1", "m1", "n2"});
  EXPECT_EQ(selection.chosen, (Names{"n1", "n2"}));
  EXPECT_TRUE(selection.missing.empty());
  EXPECT_FALSE(selection.complete);
  EXPECT_EQ(selection.shortfall, "2 of 3 agents registered: n1, n2; connected but not in the profile: m1");
}

TEST(Planner, CountOfAnyAgentsNotMetIsIncomplete) {
  AgentSelector selector;
  selector.count = 2;
  const auto selection = select_agents(selector, {"only"});
  EXPECT_EQ(selection.chosen, (Names{"only"}));
  EXPECT_FALSE(selection.complete);
  EXPECT_EQ(selection.shortfall, "1 of 2 agents registered: only");
}

TEST(Planner, NothingMatchingIsIncomplete) {
  const auto selection = select_agents(patterns({"zzz*"}), {"a", "b"});
  EXPECT_TRUE(selection.chosen.empty());
  EXPECT_FALSE(selection.complete);
  EXPECT_EQ(selection.shortfall, "no agent matches the profile's selection; connected but not in the profile: a, b");
}

TEST(Planner, NoAgentsRegisteredIsIncomplete) {
  const auto selection = select_agents(AgentSelector{}, {});
  EXPECT_TRUE(selection.chosen.empty());
  EXPECT_FALSE(selection.complete);
  EXPECT_FALSE(selection.shortfall.empty());
}

// ---- plan_test: topologies -------------------------------------------------------------------

TEST(Planner, LoopbackGivesEachAgentAPlanWithNoPeers) {
  const auto plans = plan_test(profile_with(rdma_test("lb", Topology::Loopback)), 0, {"a", "b", "c"}, "run");
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(agents_of(plans), (Names{"a", "b", "c"}));
  for (const auto& plan : plans) EXPECT_EQ(plan.plan.peers_size(), 0) << plan.agent;
}

TEST(Planner, LoopbackWorksWithASingleAgent) {
  const auto plans = plan_test(profile_with(rdma_test("lb", Topology::Loopback)), 0, {"solo"}, "run");
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].plan.peers_size(), 0);
}

TEST(Planner, PairsTopologyPairsNeighboursInOrder) {
  // 0<->1, 2<->3.
  const auto plans = plan_test(profile_with(rdma_test("p", Topology::Pairs)), 0, {"a", "b", "c", "d"}, "run");
  ASSERT_EQ(plans.size(), 4u);
  EXPECT_EQ(agents_of(plans), (Names{"a", "b", "c", "d"}));
  EXPECT_EQ(peers_of(plans[0]), (Names{"b"}));
  EXPECT_EQ(peers_of(plans[1]), (Names{"a"}));
  EXPECT_EQ(peers_of(plans[2]), (Names{"d"}));
  EXPECT_EQ(peers_of(plans[3]), (Names{"c"}));
}

TEST(Planner, PairsTopologyNeedsAnEvenNumberOfAgents) {
  const auto profile = profile_with(rdma_test("pairs-test", Topology::Pairs));
  EXPECT_THROW(plan_test(profile, 0, {"a", "b", "c"}, "run"), PlanError);
  EXPECT_THROW(plan_test(profile, 0, {"a"}, "run"), PlanError);
  try {
    plan_test(profile, 0, {"a", "b", "c"}, "run");
  } catch (const PlanError& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("pairs-test"), std::string::npos) << what;
    EXPECT_NE(what.find("even"), std::string::npos) << what;
    EXPECT_NE(what.find("3 selected"), std::string::npos) << what;
  }
}

TEST(Planner, RingSendsEachAgentToTheNextModuloN) {
  // n = 3: 0->1, 1->2, 2->(3 mod 3 = 0).
  const auto plans = plan_test(profile_with(rdma_test("r", Topology::Ring)), 0, {"a", "b", "c"}, "run");
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(peers_of(plans[0]), (Names{"b"}));
  EXPECT_EQ(peers_of(plans[1]), (Names{"c"}));
  EXPECT_EQ(peers_of(plans[2]), (Names{"a"}));
}

TEST(Planner, EachReceiverIsToldWhoSendsToIt) {
  // A ring's receivers send nowhere near their senders, an incast's hub sends to nobody: a
  // receiver names the streams that arrive by these senders.
  const auto ring = plan_test(profile_with(dpdk_test("r", Topology::Ring)), 0, {"a", "b", "c"}, "run");
  const auto senders_of = [](const AgentPlan& plan) {
    Names names;
    for (const auto& sender : plan.plan.senders()) names.push_back(sender.agent_name());
    return names;
  };
  EXPECT_EQ(senders_of(ring[0]), (Names{"c"}));
  EXPECT_EQ(senders_of(ring[1]), (Names{"a"}));
  EXPECT_EQ(senders_of(ring[2]), (Names{"b"}));
  const auto incast = plan_test(profile_with(dpdk_test("i", Topology::Incast)), 0, {"s", "x", "y"}, "run");
  EXPECT_EQ(senders_of(incast[0]), (Names{"x", "y"}));
  EXPECT_TRUE(senders_of(incast[1]).empty());
}

TEST(Planner, RingOfTwoSendsBothWays) {
  // n = 2: 0->1, 1->(2 mod 2 = 0).
  const auto plans = plan_test(profile_with(rdma_test("r", Topology::Ring)), 0, {"a", "b"}, "run");
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(peers_of(plans[0]), (Names{"b"}));
  EXPECT_EQ(peers_of(plans[1]), (Names{"a"}));
}

TEST(Planner, RingNeedsAtLeastTwoAgents) {
  const auto profile = profile_with(rdma_test("ring-test", Topology::Ring));
  EXPECT_THROW(plan_test(profile, 0, {"a"}, "run"), PlanError);
  EXPECT_THROW(plan_test(profile, 0, {}, "run"), PlanError);
}

TEST(Planner, PipelineIsAChainWhoseLastStageSendsNothing) {
  const auto plans = plan_test(profile_with(rdma_test("p", Topology::Pipeline)), 0, {"a", "b", "c"}, "run");
  EXPECT_EQ(peers_of(plans[0]), (Names{"b"}));
  EXPECT_EQ(peers_of(plans[1]), (Names{"c"}));
  EXPECT_EQ(peers_of(plans[2]), (Names{}));
}

TEST(Planner, IncastSendsEveryOtherAgentToTheFirst) {
  const auto plans = plan_test(profile_with(rdma_test("i", Topology::Incast)), 0, {"a", "b", "c", "d"}, "run");
  EXPECT_EQ(peers_of(plans[0]), (Names{}));
  for (std::size_t i = 1; i < 4; ++i) EXPECT_EQ(peers_of(plans[i]), (Names{"a"})) << i;
}

TEST(Planner, PermutationCrossesTheBisectionAndNeedsAnEvenCount) {
  // n = 4: i -> i + 2 (mod 4).
  const auto plans = plan_test(profile_with(rdma_test("x", Topology::Permutation)), 0, {"a", "b", "c", "d"}, "run");
  EXPECT_EQ(peers_of(plans[0]), (Names{"c"}));
  EXPECT_EQ(peers_of(plans[1]), (Names{"d"}));
  EXPECT_EQ(peers_of(plans[2]), (Names{"a"}));
  EXPECT_EQ(peers_of(plans[3]), (Names{"b"}));
  EXPECT_THROW(plan_test(profile_with(rdma_test("x", Topology::Permutation)), 0, {"a", "b", "c"}, "run"), PlanError);
}

TEST(Planner, MeshSendsEachAgentToEveryOtherAgent) {
  // n = 4: each has n - 1 = 3 peers, itself excluded, in name order.
  const auto plans = plan_test(profile_with(rdma_test("m", Topology::Mesh)), 0, {"a", "b", "c", "d"}, "run");
  ASSERT_EQ(plans.size(), 4u);
  EXPECT_EQ(peers_of(plans[0]), (Names{"b", "c", "d"}));
  EXPECT_EQ(peers_of(plans[1]), (Names{"a", "c", "d"}));
  EXPECT_EQ(peers_of(plans[2]), (Names{"a", "b", "d"}));
  EXPECT_EQ(peers_of(plans[3]), (Names{"a", "b", "c"}));
}

TEST(Planner, MeshNeedsAtLeastTwoAgents) {
  EXPECT_THROW(plan_test(profile_with(rdma_test("m", Topology::Mesh)), 0, {"a"}, "run"), PlanError);
}

// ---- plan_test: what each plan carries -------------------------------------------------------

TEST(Planner, PlansCarryRunTestTimingAndSafetyCaps) {
  Profile profile;
  profile.safety.max_rate_bps = 100e9;
  profile.safety.max_duration = 2h;
  profile.tests.push_back(rdma_test("first", Topology::Pairs));
  TestSpec second = rdma_test("second", Topology::Pairs);
  second.duration = 30s;
  second.sample_interval = 250ms;
  rdma::params(second).set_rate_bps(25e9);
  profile.tests.push_back(second);

  const auto plans = plan_test(profile, 1, {"a", "b"}, "20240102T030405Z-beef");
  ASSERT_EQ(plans.size(), 2u);
  for (const auto& [agent, plan] : plans) {
    SCOPED_TRACE(agent);
    EXPECT_EQ(plan.run_id(), "20240102T030405Z-beef");
    EXPECT_EQ(plan.test_index(), 1);
    EXPECT_EQ(plan.test_name(), "second");
    EXPECT_EQ(plan.engine(), "rdma");
    EXPECT_EQ(plan.duration_ms(), 30000u);       // 30 s
    EXPECT_EQ(plan.sample_interval_ms(), 250u);  // 250 ms
    EXPECT_EQ(plan.max_rate_bps(), 100e9);
    EXPECT_EQ(plan.max_duration_ms(), 7200000u);  // 2 h = 2 * 3600 * 1000 ms
    ASSERT_TRUE(plan.has_rdma());
    EXPECT_FALSE(plan.has_dpdk());
    EXPECT_EQ(plan.rdma().device(), "mlx5_0");
    EXPECT_EQ(plan.rdma().operation(), "write");
    EXPECT_EQ(plan.rdma().rate_bps(), 25e9);  // below the cap: kept as written
  }
}

TEST(Planner, DpdkPlansCarryTheDpdkParameters) {
  auto test = dpdk_test("d", Topology::Pairs);
  dpdk::params(test).set_rate_pps(1e6);
  const auto plans = plan_test(profile_with(test), 0, {"a", "b"}, "run");
  ASSERT_EQ(plans.size(), 2u);
  const auto& plan = plans[0].plan;
  EXPECT_EQ(plan.engine(), "dpdk");
  ASSERT_TRUE(plan.has_dpdk());
  EXPECT_FALSE(plan.has_rdma());
  EXPECT_EQ(plan.dpdk().port(), "0000:3b:00.0");
  EXPECT_EQ(plan.dpdk().frame_size(), 1514u);
  EXPECT_EQ(plan.dpdk().rate_pps(), 1e6);
}

// The offered rate and the frame mix are resolved once, here, for the printer and the reports.
TEST(Planner, DpdkPlansCarryTheOfferedRateAndTheFrameMixResolvedOnce) {
  auto test = dpdk_test("d", Topology::Pairs);
  auto& params = dpdk::params(test);
  for (const std::uint32_t size : {64u, 64u, 1500u}) params.add_frame_sizes(size);
  params.set_rate_pps(1e6);
  auto plan = plan_test(profile_with(test), 0, {"a", "b"}, "run")[0].plan.dpdk();
  EXPECT_DOUBLE_EQ(plan.mean_frame_bytes(), 1628.0 / 3);
  EXPECT_EQ(plan.largest_frame_bytes(), 1500u);  // the list replaces frame_size 1514
  EXPECT_DOUBLE_EQ(plan.offered_pps(), 1e6);
  EXPECT_DOUBLE_EQ(plan.offered_bps(), 1e6 * 1628.0 / 3 * 8);

  params.set_rate_pps(0);
  params.set_rate_bps(10e9);
  plan = plan_test(profile_with(test), 0, {"a", "b"}, "run")[0].plan.dpdk();
  EXPECT_DOUBLE_EQ(plan.offered_bps(), 10e9);
  EXPECT_DOUBLE_EQ(plan.offered_pps(), 10e9 / (1628.0 / 3 * 8));

  params.set_rate_bps(0);  // line rate: nothing to offer but the port's speed
  plan = plan_test(profile_with(test), 0, {"a", "b"}, "run")[0].plan.dpdk();
  EXPECT_EQ(plan.offered_pps(), 0);
  EXPECT_EQ(plan.offered_bps(), 0);
}

// `plan` prints what the plan carries: the offered packet and bit rate at the mix's mean frame.
TEST(Planner, ThePlanLineShowsTheOfferedRateOfAFrameMix) {
  auto test = dpdk_test("d", Topology::Pairs);
  for (const std::uint32_t size : {64u, 64u, 1500u}) dpdk::params(test).add_frame_sizes(size);
  dpdk::params(test).set_rate_pps(1e6);
  const Profile profile = profile_with(test);
  const std::string text = plan_text(profile, expand_plan(profile, {"a", "b"}, "run"));
  EXPECT_NE(text.find("| 1.00 Mpps (4.34 Gbit/s at mean 542.7 B) per agent, shared by its 1 flow |"), std::string::npos)
      << text;
}

TEST(Planner, WithoutASafetyCapPlansHaveNoRateLimit) {
  const auto plans = plan_test(profile_with(dpdk_test("d", Topology::Loopback)), 0, {"a"}, "run");
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].plan.max_rate_bps(), 0.0);
  EXPECT_EQ(plans[0].plan.dpdk().rate_bps(), 0.0);        // line rate stays line rate
  EXPECT_EQ(plans[0].plan.max_duration_ms(), 86400000u);  // default 24 h = 24 * 3600 * 1000 ms
}

TEST(Planner, DpdkLineRateUnderASafetyCapRunsAtTheCap) {
  auto profile = profile_with(dpdk_test("d", Topology::Loopback));  // rate_bps 0, rate_pps 0
  profile.safety.max_rate_bps = 40e9;
  const auto plans = plan_test(profile, 0, {"a"}, "run");
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].plan.dpdk().rate_bps(), 40e9);
  EXPECT_EQ(plans[0].plan.dpdk().rate_pps(), 0.0);
}

TEST(Planner, DpdkExplicitRatesAreKeptUnderASafetyCap) {
  auto by_pps = dpdk_test("pps", Topology::Loopback);
  dpdk::params(by_pps).set_rate_pps(1e6);
  auto profile = profile_with(by_pps);
  profile.safety.max_rate_bps = 40e9;
  auto plans = plan_test(profile, 0, {"a"}, "run");
  // A packet rate is a rate: no bps is added on top of it.
  EXPECT_EQ(plans[0].plan.dpdk().rate_bps(), 0.0);
  EXPECT_EQ(plans[0].plan.dpdk().rate_pps(), 1e6);

  dpdk::params(profile.tests[0]).set_rate_pps(0);
  dpdk::params(profile.tests[0]).set_rate_bps(10e9);
  plans = plan_test(profile, 0, {"a"}, "run");
  EXPECT_EQ(plans[0].plan.dpdk().rate_bps(), 10e9);
}

TEST(Planner, RdmaAsFastAsPossibleUnderASafetyCapRunsAtTheCap) {
  auto profile = profile_with(rdma_test("r", Topology::Pairs));  // rate_bps 0
  profile.safety.max_rate_bps = 200e9;
  const auto plans = plan_test(profile, 0, {"a", "b"}, "run");
  ASSERT_EQ(plans.size(), 2u);
  for (const auto& plan : plans) EXPECT_EQ(plan.plan.rdma().rate_bps(), 200e9) << plan.agent;
}

TEST(Planner, PlanningDoesNotChangeTheProfile) {
  auto profile = profile_with(rdma_test("r", Topology::Pairs));
  profile.safety.max_rate_bps = 200e9;
  plan_test(profile, 0, {"a", "b"}, "run");
  EXPECT_EQ(rdma::params(profile.tests[0]).rate_bps(), 0.0);
}

TEST(Planner, UnknownTestIndexThrows) {
  EXPECT_ANY_THROW(plan_test(profile_with(rdma_test("r", Topology::Pairs)), 1, {"a", "b"}, "run"));
}

// ---- missing_engines -------------------------------------------------------------------------

TEST(Planner, NoMissingEnginesWhenEveryAgentHasThem) {
  Profile profile;
  profile.tests = {rdma_test("r", Topology::Pairs), dpdk_test("d", Topology::Pairs)};
  const auto problems =
      missing_engines(profile, {inventory({"rdma", "dpdk"}), inventory({"dpdk", "rdma"})}, {"a", "b"});
  EXPECT_TRUE(problems.empty());
}

TEST(Planner, MissingEnginesNameTheAgentTheEngineAndItsNotes) {
  Profile profile;
  profile.tests = {rdma_test("r", Topology::Pairs), dpdk_test("d", Topology::Pairs)};
  const std::vector<proto::Inventory> inventories{
      inventory({"rdma", "dpdk"}),
      inventory({"rdma"}, {"no DPDK port bound", "hugepages: 0"}),
      inventory({}),
  };
  const auto problems = missing_engines(profile, inventories, {"a", "b", "c"});
  // Engines are checked in name order: dpdk before rdma.
  EXPECT_EQ(problems, (Names{
                          "b: has no dpdk engine (no DPDK port bound; hugepages: 0)",
                          "c: has no dpdk engine",
                          "c: has no rdma engine",
                      }));
}

TEST(Planner, OnlyEnginesTheProfileUsesAreRequired) {
  const auto profile = profile_with(rdma_test("r", Topology::Loopback));
  EXPECT_TRUE(missing_engines(profile, {inventory({"rdma"}, {"no DPDK port bound"})}, {"a"}).empty());
  EXPECT_EQ(missing_engines(profile, {inventory({"dpdk"}, {"no RDMA device found"})}, {"a"}),
            (Names{"a: has no rdma engine (no RDMA device found)"}));
}

// ---- make_run_id -----------------------------------------------------------------------------

TEST(Planner, RunIdIsAUtcTimestampAndFourHexDigits) {
  const std::regex form(R"(^(\d{4})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3])[0-5]\d[0-6]\dZ-[0-9a-f]{4}$)");
  for (int i = 0; i < 20; ++i) {
    const std::string id = make_run_id();
    EXPECT_TRUE(std::regex_match(id, form)) << id;
    EXPECT_EQ(id.size(), 21u) << id;  // 8 + 1 + 6 + 1 + 1 + 4
  }
}

// ---- set_peer_clock_offsets: one-way latency without the clocks' offset ----------------------

TEST(Planner, EachPeerAndSenderCarriesItsClockMinusTheReceiversAndAnUnknownClockStaysZero) {
  auto plans = plan_test(profile_with(dpdk_test("t", Topology::Mesh)), 0, {"a", "b", "c"}, "run");
  ASSERT_EQ(plans.size(), 3u);
  // Each agent's clock minus the controller's; c's is unknown.
  set_peer_clock_offsets(plans, {{"a", 1'000}, {"b", -4'000}});
  std::map<std::string, std::int64_t> seen;
  for (const auto& plan : plans) {
    for (const auto* endpoints : {&plan.plan.peers(), &plan.plan.senders()}) {
      for (const auto& peer : *endpoints) seen[plan.agent + "<" + peer.agent_name()] = peer.clock_offset_ns();
    }
  }
  EXPECT_EQ(seen.at("a<b"), -5'000);  // b's clock is 5 us behind a's: a adds -5 us to b's latency
  EXPECT_EQ(seen.at("b<a"), 5'000);
  EXPECT_EQ(seen.at("a<c"), 0);
  EXPECT_EQ(seen.at("c<a"), 0);
  EXPECT_EQ(seen.at("c<b"), 0);
  // Agents on one host share its clock: their estimates differ only by their errors.
  set_peer_clock_offsets(plans, {{"a", 1'000}, {"b", -4'000}, {"c", 7'000}}, {{"a", "h1"}, {"b", "h1"}, {"c", "h2"}});
  for (const auto& plan : plans) {
    for (const auto& peer : plan.plan.peers()) seen[plan.agent + "<" + peer.agent_name()] = peer.clock_offset_ns();
  }
  EXPECT_EQ(seen.at("a<b"), 0);
  EXPECT_EQ(seen.at("b<a"), 0);
  EXPECT_EQ(seen.at("a<c"), 6'000);
  EXPECT_EQ(seen.at("c<b"), -11'000);
}

}  // namespace
}  // namespace tusk

namespace {

tusk::proto::Inventory with_gids(std::initializer_list<std::pair<const char*, const char*>> ip_and_type) {
  tusk::proto::Inventory inventory;
  auto* port = inventory.add_rdma_devices()->add_ports();
  for (const auto& [ip, type] : ip_and_type) {
    auto* gid = port->add_gids();
    gid->set_ip(ip);
    gid->set_type(type);
  }
  return inventory;
}

TEST(DataPlaneAddress, RdmaPicksThePeersAddressOnTheLinkBothShare) {
  // Three hosts joined pairwise by point-to-point links, one NIC per link, as in the VM lab.
  const auto a = with_gids({{"10.99.1.1", "RoCE v2"}, {"10.99.2.1", "RoCE v2"}});
  const auto b = with_gids({{"10.99.1.2", "RoCE v2"}, {"10.99.3.2", "RoCE v2"}});
  const auto c = with_gids({{"10.99.2.3", "RoCE v2"}, {"10.99.3.3", "RoCE v2"}});
  EXPECT_EQ(tusk::data_plane_address("rdma", a, b), "10.99.1.2");
  EXPECT_EQ(tusk::data_plane_address("rdma", a, c), "10.99.2.3");
  EXPECT_EQ(tusk::data_plane_address("rdma", b, c), "10.99.3.3");
  EXPECT_EQ(tusk::data_plane_address("rdma", c, a), "10.99.2.1");
}

TEST(DataPlaneAddress, RdmaPrefersRoceV2AndSkipsGidsWithoutIpv4) {
  const auto from = with_gids({{"192.168.5.1", "RoCE v2"}});
  const auto to = with_gids({{"", "IB/RoCE v1"}, {"192.168.5.2", "IB/RoCE v1"}, {"192.168.5.2", "RoCE v2"}});
  EXPECT_EQ(tusk::data_plane_address("rdma", from, to), "192.168.5.2");
  EXPECT_EQ(tusk::data_plane_address("rdma", from, tusk::proto::Inventory{}), "");
}

// Rails: every agent's r-th RDMA device with a RoCE IPv4 address is rail r; its plan names its own
// rail devices and every peer's (and sender's) address on each rail.
tusk::proto::Inventory with_devices(std::initializer_list<std::pair<const char*, const char*>> device_and_ip) {
  tusk::proto::Inventory inventory;
  for (const auto& [name, ip] : device_and_ip) {
    auto* device = inventory.add_rdma_devices();
    device->set_name(name);
    auto* gid = device->add_ports()->add_gids();
    gid->set_ip(ip);
    gid->set_type("RoCE v2");
  }
  return inventory;
}

// A ring of agents a and b on two rails, planned (not yet described).
std::vector<tusk::AgentPlan> two_rail_plans() {
  tusk::TestSpec test = tusk::rdma_test("replay", tusk::Topology::Ring);
  tusk::rdma::params(test).clear_device();
  tusk::rdma::params(test).set_rails(2);
  return tusk::plan_test(tusk::profile_with(test), 0, {"a", "b"}, "run");
}

TEST(DescribePlan, RailsNameEachAgentsDevicesAndThePeersAddressOnEveryRail) {
  const std::map<std::string, tusk::proto::Inventory> inventories{
      {"a", with_devices({{"mlx5_0", "10.0.0.1"}, {"mlx5_1", "10.1.0.1"}, {"mlx5_2", "10.2.0.1"}})},
      {"b", with_devices({{"mlx5_4", "10.0.0.2"}, {"mlx5_5", "10.1.0.2"}})}};
  auto plans = two_rail_plans();
  for (auto& plan : plans) tusk::describe_plan(plan, inventories);
  const auto& a = plans[0].plan;
  ASSERT_EQ(a.rdma().rail_endpoints_size(), 2) << "the first two of a's three devices";
  EXPECT_EQ(a.rdma().rail_endpoints(0).device(), "mlx5_0");
  EXPECT_EQ(a.rdma().rail_endpoints(1).address(), "10.1.0.1");
  ASSERT_EQ(a.peers_size(), 1);
  EXPECT_EQ(a.peers(0).rail_addresses(0), "10.0.0.2");
  EXPECT_EQ(a.peers(0).rail_addresses(1), "10.1.0.2");
  EXPECT_EQ(plans[1].plan.rdma().rail_endpoints(1).device(), "mlx5_5");
  EXPECT_EQ(plans[1].plan.senders(0).rail_addresses(1), "10.1.0.1");
}

TEST(DescribePlan, AnAgentWithFewerRailDevicesThanRailsIsNamedAndNothingStarts) {
  const std::map<std::string, tusk::proto::Inventory> inventories{
      {"a", with_devices({{"mlx5_0", "10.0.0.1"}, {"mlx5_1", "10.1.0.1"}})},
      {"b", with_devices({{"mlx5_4", "10.0.0.2"}})}};
  auto plans = two_rail_plans();
  try {
    tusk::describe_plan(plans[0], inventories);
    FAIL() << "planned rails b does not have";
  } catch (const tusk::PlanError& e) {
    EXPECT_STREQ(e.what(),
                 "test replay: rails: 2 needs 2 RDMA devices with a RoCE IPv4 address on b, which has 1 (mlx5_4 "
                 "10.0.0.2)");
  }
}

TEST(DataPlaneAddress, DpdkIsThePeersPortMac) {
  tusk::proto::Inventory to;
  to.add_dpdk_ports()->set_mac("02:00:00:00:00:02");
  EXPECT_EQ(tusk::data_plane_address("dpdk", tusk::proto::Inventory{}, to), "02:00:00:00:00:02");
  EXPECT_EQ(tusk::data_plane_address("dpdk", tusk::proto::Inventory{}, tusk::proto::Inventory{}), "");
}

}  // namespace

namespace {

TEST(CollectiveBytes, EachAlgorithmPutsItsShareOnTheWire) {
  // S = 3 MB over G = 3 ranks: ring all-reduce 2(G-1)/G*S = 4 MB to the next rank; all-gather and
  // reduce-scatter (G-1)/G*S = 2 MB; all-to-all S/G = 1 MB to each other rank.
  EXPECT_EQ(tusk::peer_bytes_per_step("all_reduce", 3'000'000, 3), 4'000'000u);
  EXPECT_EQ(tusk::peer_bytes_per_step("all_gather", 3'000'000, 3), 2'000'000u);
  EXPECT_EQ(tusk::peer_bytes_per_step("reduce_scatter", 3'000'000, 3), 2'000'000u);
  EXPECT_EQ(tusk::peer_bytes_per_step("all_to_all", 3'000'000, 3), 1'000'000u);
  EXPECT_EQ(tusk::peer_bytes_per_step("all_reduce", 3'000'000, 1), 0u) << "one rank sends nothing";
  // nccl-tests: busbw = algbw * 2(n-1)/n for all-reduce, (n-1)/n for the others.
  EXPECT_DOUBLE_EQ(tusk::bus_bandwidth_factor("all_reduce", 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(tusk::bus_bandwidth_factor("all_to_all", 8), 7.0 / 8);
}

}  // namespace
