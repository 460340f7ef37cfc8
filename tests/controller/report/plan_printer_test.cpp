// `tusk-controller plan` for people: a method's steps expanded, each rate's scope, the profile's length.
#include "controller/report/plan_printer.hpp"

#include <gtest/gtest.h>

#include <set>

#include "controller/profile/profile_loader.hpp"

namespace tusk {
namespace {

constexpr const char* kProfile = R"(name: plan-check
agents:
  hosts: [a, b, c, d]
tests:
  - name: sizes
    engine: rdma
    topology: mesh
    duration: 5s
    message_sizes: 2..8MiB
    data_check: false  # messages under 24 B cannot carry a checked message's header
    qps_per_peer: 2
    rate: 12Gbps
  - name: rfc
    engine: dpdk
    topology: pairs
    duration: 10s
    frame_size: 512B
    rate: 1Gbps
    method:
      kind: throughput
      trial: 2s
      frame_sizes: [64B, 1518B]
)";

// Before: `plan` of an RDMA test with message_sizes: 2..8MiB printed one 64 KiB, 5 s test (the
// sweep is 23 steps); of an RFC 2544 method, its base frame size and duration; never the
// profile's length nor whether a rate is per agent, per peer or per QP.
TEST(PlanText, ExpandsASweepIntoItsStepsSaysEachRatesScopeAndTheProfilesLength) {
  const Profile profile = load_profile_text(kProfile, "plan-check.yaml");
  const ExpandedPlan plan = expand_plan(profile, {"a", "b", "c", "d"}, "plan-only");
  const std::string text = plan_text(profile, plan);
  EXPECT_NE(text.find("method sweep: 23 steps"), std::string::npos) << text;
  EXPECT_NE(text.find("step 1 sizes [2 B]: 5 s\n      device (the route's) | write 2 B messages |"), std::string::npos)
      << text;
  EXPECT_NE(text.find("step 23 sizes [8388608 B]: 5 s\n      device (the route's) | write 8 MiB messages"),
            std::string::npos)
      << text;
  // Each agent of a mesh of 4 sends to 3 peers on 2 QPs each: 6 QPs share its rate.
  EXPECT_NE(text.find("12.0 Gbit/s per agent, shared by its 6 sending QPs (2.00 Gbit/s each)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("1.00 Gbit/s (244 kpps at 512 B) per agent, shared by its 1 flow"), std::string::npos) << text;
  // A search: its trials are not known in advance, their number is bounded.
  EXPECT_NE(text.find("method throughput: a search of 2 to 32 trials of 2 s each"), std::string::npos) << text;
  // 23 steps of 5 s, and 2 to 32 trials of 2 s.
  EXPECT_NE(text.find("length: 1 m 59 s to 2 m 59 s of traffic"), std::string::npos) << text;

  const auto planned = plan_json(profile, plan);
  EXPECT_EQ(planned["tests"][0]["steps"].size(), 23u);
  EXPECT_EQ(planned["tests"][1]["search"]["most_trials"], 32);
  EXPECT_EQ(planned["length_s"]["least"], 119.0);
  EXPECT_EQ(planned["length_s"]["most"], 179.0);
}

// Before: `plan` of `shifts: all` listed only the first step's pairs (7 of 42 for 7 agents), a
// method's plan printed the safe defaults as applying whether its steps kept them or not, and a
// search's plan left out its frame sizes.
TEST(PlanText, AScheduleListsEveryStepsPairsAndTheRulesItsStepsAreJudgedOn) {
  const Profile profile = load_profile_text(R"(name: night
agents:
  hosts: [a, b, c, d, e, f, g]
tests:
  - name: pod
    engine: dpdk
    topology: shift
    step: 2s
    rate: 1kpps
  - name: search
    engine: dpdk
    topology: mesh
    duration: 2s
    rate: 1Gbps
    method: {kind: throughput, frame_sizes: [64B, 1518B]}
)",
                                            "night.yaml");
  const std::vector<std::string> agents{"a", "b", "c", "d", "e", "f", "g"};
  const ExpandedPlan plan = expand_plan(profile, agents, "plan-only");
  const std::string text = plan_text(profile, plan);
  EXPECT_NE(text.find("method shift: 6 steps"), std::string::npos) << text;
  EXPECT_NE(text.find("a -> b; b -> c; c -> d; d -> e; e -> f; f -> g; g -> a"), std::string::npos) << text;
  EXPECT_NE(text.find("a -> g; b -> a; c -> b; d -> c; e -> d; f -> e; g -> f"), std::string::npos) << text;
  const auto planned = plan_json(profile, plan);
  std::set<std::pair<std::string, std::string>> pairs;
  for (const auto& step : planned["tests"][0]["steps"]) {
    for (const auto& pair : step["pairs"]) pairs.emplace(pair[0], pair[1]);
  }
  EXPECT_EQ(pairs.size(), 42u) << "every ordered pair of 7 agents once";
  EXPECT_EQ(planned["tests"][0]["pairs_in_all"], 42);
  // The schedule's steps keep the safe defaults; the search's trials are not judged on loss.
  const auto search_at = text.find("test 1 'search'");
  ASSERT_NE(search_at, std::string::npos) << text;
  const std::string schedule = text.substr(0, search_at), search = text.substr(search_at);
  EXPECT_NE(schedule.find("lost_frames <= 0 (max_lost_frames)"), std::string::npos) << schedule;
  EXPECT_EQ(search.find("lost_frames <= 0"), std::string::npos) << search;
  EXPECT_NE(search.find("at frame sizes 64 B, 1518 B"), std::string::npos) << search;
  bool schedule_judges_loss = false;
  for (const auto& threshold : planned["tests"][0]["step_thresholds"]) {
    schedule_judges_loss |= threshold["metric"] == "lost_frames" && threshold["safe_default"] == true;
  }
  EXPECT_TRUE(schedule_judges_loss) << planned["tests"][0]["step_thresholds"].dump();
  EXPECT_EQ(planned["tests"][1]["search"]["frame_sizes"], nlohmann::json::parse("[64, 1518]"));
}

// Before: `plan` of `group_by: leaf` printed "0 s of traffic" and a ring that would not run, and
// took no --topology to show the real schedule.
TEST(PlanText, AScheduleByLeafIsPlannedFromTheTopologyFileOrSaysItIsNot) {
  const Profile profile = load_profile_text(R"(name: leaves
agents:
  hosts: [l1h1, l1h2, l2h1, l2h2]
tests:
  - name: cross
    engine: dpdk
    topology: shift
    group_by: leaf
    step: 3s
    rate: 1kpps
)",
                                            "leaves.yaml");
  const std::vector<std::string> agents{"l1h1", "l1h2", "l2h1", "l2h2"};
  const std::string unplaced = plan_text(profile, expand_plan(profile, agents, "plan-only"));
  EXPECT_NE(unplaced.find("give plan --topology FILE"), std::string::npos) << unplaced;
  EXPECT_NE(unplaced.find("not counted: test 'cross'"), std::string::npos) << unplaced;
  EXPECT_EQ(unplaced.find("l1h1 -> l1h2"), std::string::npos) << "no ring that will not run: " << unplaced;
  const FabricTopology topology = load_topology_text(R"(devices:
  l1h1: {interfaces: {p0: 10.0.1.1}}
  l1h2: {interfaces: {p0: 10.0.1.2}}
  l2h1: {interfaces: {p0: 10.0.2.1}}
  l2h2: {interfaces: {p0: 10.0.2.2}}
  l1: {interfaces: {h1: ~, h2: ~}}
  l2: {interfaces: {h1: ~, h2: ~}}
links:
  - l1h1:p0 <-> l1:h1
  - l1h2:p0 <-> l1:h2
  - l2h1:p0 <-> l2:h1
  - l2h2:p0 <-> l2:h2
)",
                                                     "fabric.yaml");
  const ExpandedPlan plan = expand_plan(profile, agents, "plan-only", &topology);
  const std::string text = plan_text(profile, plan);
  // 2 leaves of 2: (2 - 1) x 2 steps cover the 8 cross-leaf pairs.
  EXPECT_NE(text.find("method shift: 2 steps"), std::string::npos) << text;
  EXPECT_NE(text.find("length: 6 s of traffic"), std::string::npos) << text;
  std::set<std::pair<std::string, std::string>> pairs;
  const auto planned = plan_json(profile, plan);
  for (const auto& step : planned["tests"][0]["steps"]) {
    for (const auto& pair : step["pairs"]) {
      pairs.emplace(pair[0], pair[1]);
      EXPECT_NE(pair[0].get<std::string>().substr(0, 2), pair[1].get<std::string>().substr(0, 2)) << pair.dump();
    }
  }
  EXPECT_EQ(pairs.size(), 8u);
}

}  // namespace
}  // namespace tusk
