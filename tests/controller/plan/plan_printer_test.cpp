// `tusk-controller plan` for people: a method's steps expanded, each rate's scope, the profile's length.
#include "controller/plan/plan_printer.hpp"

#include <gtest/gtest.h>

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

  const auto json = plan_json(profile, plan);
  EXPECT_EQ(json["tests"][0]["steps"].size(), 23u);
  EXPECT_EQ(json["tests"][1]["search"]["most_trials"], 32);
  EXPECT_EQ(json["length_s"]["least"], 119.0);
  EXPECT_EQ(json["length_s"]["most"], 179.0);
}

}  // namespace
}  // namespace tusk
