// --only-through and --only-failing: the flows an earlier report says crossed a link or failed, and
// plans cut down to them.
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

TEST(FlowSelection, WhatFailedIsEachFailingFlowAndAWholePartWhereNothingNarrowerIs) {
  plain_json failing_flows = report()["tests"][0]["localisation"]["flows"];
  failing_flows[0]["passed"] = true;
  failing_flows[1]["passed"] = false;
  failing_flows[2]["passed"] = false;
  const plain_json earlier = plain_json::parse(R"({"run_id": "r-1", "tests": [
    {"name": "passing", "verdict": "pass", "streams": []},
    {"name": "pairs", "verdict": "fail", "streams": [
       {"agent": "b", "peer": "a", "sender": "a", "receiver": "b", "passed": false, "flow": {"src_port": 49200}},
       {"agent": "a", "peer": "b", "sender": "a", "receiver": "b", "passed": false, "flow": {"src_port": 49200}},
       {"agent": "d", "peer": "c", "sender": "c", "receiver": "d", "passed": true}]},
    {"name": "plug", "verdict": "fail", "streams": [{"agent": "c", "peer": "self", "passed": false}]},
    {"name": "lost", "verdict": "fail", "agents": [{"agent": "a"}, {"agent": "d"}], "problems": ["agent 'd' lost"],
     "streams": []},
    {"name": "steps", "verdict": "fail", "method": {"steps": []}}]})");
  plain_json with_mesh = earlier;
  with_mesh["tests"].push_back({{"name", "mesh"},
                                {"verdict", "fail"},
                                {"localisation", {{"flows", failing_flows}}},
                                {"streams", plain_json::array({{{"agent", "b"}, {"peer", "a"}, {"passed", false}}})}});
  const FlowSelection selection = select_failing_flows(with_mesh);
  ASSERT_EQ(selection.by_test.size(), 4u);
  const auto text = [&](const std::string& test) {
    std::vector<std::string> out;
    for (const auto& f : selection.by_test.at(test))
      out.push_back(f.sender + ">" + f.receiver + ":" + std::to_string(f.src_port));
    return out;
  };
  EXPECT_EQ(text("pairs"), (std::vector<std::string>{"a>b:49200"})) << "both ends' streams are one flow";
  EXPECT_EQ(text("plug"), (std::vector<std::string>{"c>c:0"}));
  EXPECT_EQ(text("lost"), (std::vector<std::string>{"a>a:0", "d>d:0"}));
  // The routed test's failing flows from localisation, not its streams again.
  EXPECT_EQ(text("mesh"), (std::vector<std::string>{"a>b:49153", "b>a:49152"}));
  EXPECT_FALSE(selection.by_test.contains("steps"));

  plain_json clean = plain_json::parse(R"({"run_id": "r-2", "tests": [{"name": "t", "verdict": "pass"}]})");
  EXPECT_THROW(
      {
        try {
          select_failing_flows(clean);
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "nothing failed in run r-2: nothing to re-test");
          throw;
        }
      },
      std::runtime_error);
}

// Issue 63, before: --only-failing took a reported source port above 65,535 (and threw on one
// that was no number).
TEST(FlowSelection, APortThatIsNoPortNamesNoFlowAndThePairIsTestedAgainWhole) {
  const plain_json earlier = plain_json::parse(R"({"run_id": "r-3", "tests": [
    {"name": "pairs", "verdict": "fail", "streams": [
       {"agent": "b", "peer": "a", "sender": "a", "receiver": "b", "passed": false, "flow": {"src_port": 70000}},
       {"agent": "d", "peer": "c", "sender": "c", "receiver": "d", "passed": false, "flow": {"src_port": "x"}},
       {"agent": "f", "peer": "e", "sender": "e", "receiver": "f", "passed": false, "flow": {"src_port": -5}}]}]})");
  const FlowSelection selection = select_failing_flows(earlier);
  std::vector<std::string> out;
  for (const auto& f : selection.by_test.at("pairs")) {
    out.push_back(f.sender + ">" + f.receiver + ":" + std::to_string(f.src_port));
  }
  EXPECT_EQ(out, (std::vector<std::string>{"a>b:0", "c>d:0", "e>f:0"}));
}

TEST(FlowSelection, AnAgentsWholePartKeepsItsPlanAsTheProfileMadeIt) {
  const Profile profile = load_profile_text(R"(name: p
agents:
  hosts: [a, b, c]
tests:
  - name: mesh
    engine: dpdk
    duration: 5s
    topology: mesh
    rate: 1kpps
)",
                                            "p.yaml");
  auto plans = plan_test(profile, 0, {"a", "b", "c"}, "run");
  const auto before = plans[2].plan.SerializeAsString();
  restrict_plans(plans, {{"c", "c", 0}, {"a", "b", 0}});
  EXPECT_EQ(plans[2].plan.SerializeAsString(), before);
  EXPECT_EQ(plans[0].plan.peers_size(), 1);
}

}  // namespace
}  // namespace tusk
