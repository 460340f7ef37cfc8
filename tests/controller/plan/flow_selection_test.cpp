// --only-through: the flows an earlier report says crossed a link, and plans cut down to them.
#include "controller/plan/flow_selection.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/profile/profile_loader.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;
using plain_json = nlohmann::json;

plain_json flow(const char* sender, const char* receiver, const char* text, std::vector<std::string> links) {
  return {{"sender", sender}, {"receiver", receiver}, {"flow", text}, {"links", links}};
}

plain_json report() {
  plain_json flows = plain_json::array();
  flows.push_back(flow("a", "b", "192.168.101.11:49152 > 192.168.102.11:34997 udp",
                       {"a:port -> l1:h1", "l1:s1 -> s1:l1", "s1:l2 -> l2:s1", "l2:h1 -> b:port"}));
  flows.push_back(flow("a", "b", "192.168.101.11:49153 > 192.168.102.11:34997 udp",
                       {"a:port -> l1:h1", "l1:s2 -> s2:l1", "s2:l2 -> l2:s2", "l2:h1 -> b:port"}));
  flows.push_back(flow("b", "a", "192.168.102.11:49152 > 192.168.101.11:34997 udp",
                       {"b:port -> l2:h1", "l2:s2 -> s2:l2", "s2:l1 -> l1:s2", "l1:h1 -> a:port"}));
  return {
      {"tests", plain_json::array({{{"name", "mesh"}, {"localisation", {{"flows", flows}}}}, {{"name", "other"}}})}};
}

TEST(FlowSelection, PicksTheFlowsThatCrossedTheLinkInThatDirection) {
  const auto selection = select_flows_through(report(), "l1:s2 -> s2:l1");
  ASSERT_EQ(selection.by_test.size(), 1u);
  const auto& flows = selection.by_test.at("mesh");
  ASSERT_EQ(flows.size(), 1u);
  EXPECT_EQ(flows[0].sender, "a");
  EXPECT_EQ(flows[0].receiver, "b");
  EXPECT_EQ(flows[0].src_port, 49153u);
  EXPECT_EQ(select_flows_through(report(), "l1:s2 -> s2:l1, cable C-l1-s2").by_test.at("mesh").size(), 1u)
      << "the suspect's name as the summary prints it";
}

TEST(FlowSelection, SaysWhatTheReportLacks) {
  try {
    select_flows_through(report(), "l9:s9 -> s9:l9");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no flow in the report crossed 'l9:s9 -> s9:l9'"));
    EXPECT_THAT(e.what(), HasSubstr("l1:s1 -> s1:l1"));
  }
  EXPECT_THROW(select_flows_through(plain_json::object(), "x"), std::runtime_error);
  EXPECT_THROW(select_flows_through(plain_json{{"tests", plain_json::array()}}, "x"), std::runtime_error);
}

TEST(FlowSelection, PlansSendOnlyTheSelectedFlowsAndIdleTheRest) {
  const Profile profile = load_profile_text(R"(name: p
agents:
  hosts: [a, b, c]
tests:
  - name: mesh
    engine: dpdk
    duration: 5s
    topology: mesh
    rate: 1kpps
    encapsulation: ipv4_udp
    flows_per_peer: 4
)",
                                            "p.yaml");
  auto plans = plan_test(profile, 0, {"a", "b", "c"}, "run");
  restrict_plans(plans, {{"a", "b", 49153}, {"a", "b", 49154}});
  ASSERT_EQ(plans.size(), 3u);
  ASSERT_EQ(plans[0].plan.peers_size(), 1);
  EXPECT_EQ(plans[0].plan.peers(0).agent_name(), "b");
  EXPECT_THAT(plans[0].plan.peers(0).source_ports(), ::testing::ElementsAre(49153u, 49154u));
  EXPECT_EQ(plans[0].plan.senders_size(), 0);
  EXPECT_FALSE(plans[0].plan.idle());
  EXPECT_EQ(plans[1].plan.peers_size(), 0);
  ASSERT_EQ(plans[1].plan.senders_size(), 1);
  EXPECT_EQ(plans[1].plan.senders(0).agent_name(), "a");
  EXPECT_FALSE(plans[1].plan.idle()) << "b receives";
  EXPECT_TRUE(plans[2].plan.idle()) << "c has no flow left";
}

}  // namespace
}  // namespace tusk
