// What a report blames by node, and what that makes each node's drain or resume: Tusk's own drains
// only are resumed, an operator's never; past the share cap nothing is done; a checkpoint acts on
// nothing. Slurm's side is parsed from sinfo's lines as Slurm prints them.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/printable.hpp"
#include "controller/actions/act_command.hpp"
#include "controller/actions/node_actions.hpp"
#include "controller/actions/report_blame.hpp"
#include "controller/actions/slurm_nodes.hpp"
#include "controller/profile/action_settings.hpp"
#include "controller/report/reports.hpp"

namespace tusk {
namespace {

using plain_json = nlohmann::json;  // not `json`: other tests of this target alias that as ordered_json
using ::testing::HasSubstr;

// Four hosts on two leaves; gpu02's cable is the named suspect, gpu03 has a host problem, the
// spine link a medium suspect of its own; gpu04 passed; a loopback test failed on gpu01's port.
plain_json fabric_report() {
  return plain_json::parse(R"({"run_id": "r-7", "status": "finished", "agents": [
    {"name": "gpu01", "hostname": "gpu01.rack4.example", "connected_at_end": true},
    {"name": "gpu02", "hostname": "gpu02.rack4.example", "connected_at_end": true},
    {"name": "gpu03", "hostname": "gpu03", "connected_at_end": true},
    {"name": "gpu04", "hostname": "", "connected_at_end": true},
    {"name": "gpu05", "hostname": "gpu05", "connected_at_end": false}],
   "tests": [
    {"name": "mesh", "streams": [
       {"agent": "gpu02", "peer": "gpu04", "stream_id": "rx:gpu04/1", "passed": false},
       {"agent": "gpu04", "peer": "gpu02", "stream_id": "tx:gpu02/1", "passed": true}],
     "localisation": {
       "hosts": [{"agent": "gpu03", "problem": "receiver cannot keep up"}],
       "flows": [
         {"sender": "gpu04", "receiver": "gpu02", "links": ["gpu04:p -> l2:h4", "l2:s1 -> s1:l2", "s1:l1 -> l1:s1", "l1:h2 -> gpu02:p"]},
         {"sender": "gpu02", "receiver": "gpu04", "links": ["gpu02:p -> l1:h2", "l1:s1 -> s1:l1"]}],
       "suspects": [
         {"link": "l1:h2 -> gpu02:p", "name": "l1:h2 -> gpu02:p, cable C-2", "confidence": "high", "kind": "loss"},
         {"link": "l2:s1 -> s1:l2", "name": "l2:s1 -> s1:l2", "confidence": "medium", "kind": "damage"},
         {"link": "s1:l1 -> l1:s1", "name": "s1:l1 -> l1:s1", "confidence": "low", "kind": "loss"}]}},
    {"name": "plug", "method": {"steps": [{"test": {"name": "plug step 1", "streams": [
       {"agent": "gpu01", "peer": "self", "stream_id": "rx:loopback", "passed": false},
       {"agent": "gpu04", "peer": "", "stream_id": "nic:mlx5_0/1", "passed": true}]}}]}}]})");
}

TEST(ReportBlame, EachNodeIsBlamedForWhatTheReportNamesAndTheRestPassOrNot) {
  const RunBlame blame = blame_from_report(fabric_report(), "report.json");
  EXPECT_EQ(blame.run_id, "r-7");
  EXPECT_TRUE(blame.finished);
  EXPECT_EQ(blame.nodes, (std::vector<std::string>{"gpu01", "gpu02", "gpu03", "gpu04", "gpu05"}));
  ASSERT_EQ(blame.faults.size(), 3u);
  EXPECT_EQ(blame.faults.at("gpu01"), "test plug step 1: stream rx:loopback of its own port failed");
  EXPECT_EQ(blame.faults.at("gpu02"), "test mesh: loss on l1:h2 -> gpu02:p, cable C-2");
  EXPECT_EQ(blame.faults.at("gpu03"), "test mesh: receiver cannot keep up");
  // gpu04's stream passed and it is named by nothing; gpu05 was gone at the end.
  EXPECT_EQ(blame.passed, (std::vector<std::string>{"gpu04"}));
  EXPECT_EQ(blame.network, (std::vector<std::string>{"l2:s1 -> s1:l2"}));  // not the low one
  EXPECT_THROW(blame_from_report(plain_json::parse(R"({"tests": []})"), "x.json"), std::runtime_error);
}

TEST(ReportBlame, ATestThatFailedOnOneNodeAloneBlamesItAndOneThatFailedAsAWholePassesNone) {
  const RunBlame blame = blame_from_report(plain_json::parse(R"({"run_id": "r-9", "status": "finished", "agents": [
    {"name": "a", "hostname": "a", "connected_at_end": true},
    {"name": "b", "hostname": "b", "connected_at_end": true},
    {"name": "c", "hostname": "c", "connected_at_end": true}],
   "tests": [
    {"name": "plug", "agents": [{"agent": "a", "lost": false}], "verdict": "fail", "problems": ["threshold on ber was judged on no stream"],
     "streams": [{"agent": "a", "peer": "self", "stream_id": "tx:self", "passed": true}]},
    {"name": "pair", "agents": [{"agent": "b"}, {"agent": "c", "lost": true}], "verdict": "fail", "problems": ["agent 'c' lost"], "streams": []}]})"),
                                           "report.json");
  ASSERT_EQ(blame.faults.size(), 1u);
  EXPECT_EQ(blame.faults.at("a"), "test plug on this node alone: threshold on ber was judged on no stream");
  EXPECT_TRUE(blame.passed.empty()) << "b and c were in a test that judged neither";
}

TEST(NodeActions, BlamedNodesAreDrainedAndOnlyTusksOwnDrainsResumed) {
  RunBlame blame = blame_from_report(fabric_report(), "report.json");
  blame.passed.push_back("gpu06");  // as if it had passed too
  blame.nodes.push_back("gpu06");
  for (int i = 7; i <= 60; ++i) blame.nodes.push_back("gpu" + std::to_string(i));  // 60 nodes: 5 % is 3
  const std::map<std::string, SchedulerNode> slurm = {
      {"gpu01", {false, ""}},
      {"gpu02", {true, "RMA ticket 4411"}},         // an operator's drain: left alone
      {"gpu04", {true, "tusk r-6: test mesh: x"}},  // Tusk's, and it passes now: resumed
      {"gpu06", {true, "memory errors"}},           // an operator's: never resumed
  };
  const NodeActionPlan plan = plan_node_actions(blame, slurm, 0.05);
  EXPECT_FALSE(plan.capped);
  ASSERT_EQ(plan.actions.size(), 2u);
  EXPECT_EQ(plan.actions[0].kind, NodeAction::Kind::Drain);
  EXPECT_EQ(plan.actions[0].node, "gpu01");
  EXPECT_EQ(plan.actions[0].reason, "tusk r-7: test plug step 1: stream rx:loopback of its own port failed");
  EXPECT_EQ(plan.actions[1].kind, NodeAction::Kind::Resume);
  EXPECT_EQ(plan.actions[1].node, "gpu04");
  EXPECT_THAT(plan.notes, ::testing::Contains(HasSubstr("gpu02: blamed")));
  EXPECT_THAT(plan.notes, ::testing::Contains(HasSubstr("already drained by an operator (RMA ticket 4411)")));
  EXPECT_THAT(plan.notes, ::testing::Contains(HasSubstr("gpu03: blamed (test mesh: receiver cannot keep up), but "
                                                        "the scheduler has no such node")));
  EXPECT_THAT(plan.notes,
              ::testing::Contains("gpu06: passed, but drained by an operator (memory errors): not resumed"));
  EXPECT_THAT(plan.notes, ::testing::Contains(HasSubstr("l2:s1 -> s1:l2: a suspect link between switches")));

  EXPECT_EQ(scontrol_command(plan.actions[0]),
            (std::vector<std::string>{"scontrol", "update", "NodeName=gpu01", "State=DRAIN",
                                      "Reason=tusk r-7: test plug step 1: stream rx:loopback of its own port failed"}));
  EXPECT_EQ(scontrol_command(plan.actions[1]),
            (std::vector<std::string>{"scontrol", "update", "NodeName=gpu04", "State=RESUME"}));
}

TEST(NodeActions, ARunBlamingMoreThanTheShareActsOnNoneAndACheckpointOnNothing) {
  const RunBlame blame = blame_from_report(fabric_report(), "report.json");  // 3 of 5 nodes
  const std::map<std::string, SchedulerNode> slurm = {{"gpu01", {}}, {"gpu04", {true, "tusk r-6: x"}}};
  const NodeActionPlan capped = plan_node_actions(blame, slurm, 0.5);
  EXPECT_TRUE(capped.capped);
  EXPECT_TRUE(capped.actions.empty()) << "not even the resume";
  ASSERT_EQ(capped.notes.size(), 1u);
  EXPECT_THAT(capped.notes[0], HasSubstr("blames 3 of its 5 nodes (60 %), more than max_share 50 %: acting on none"));
  EXPECT_EQ(plan_node_actions(blame, slurm, 0.6).actions.size(), 2u) << "at the share exactly, it acts";

  plain_json checkpoint = fabric_report();
  checkpoint["status"] = "running";
  const NodeActionPlan none = plan_node_actions(blame_from_report(checkpoint, "report.json"), slurm, 1.0);
  EXPECT_TRUE(none.actions.empty());
  EXPECT_THAT(none.notes.at(0), HasSubstr("a checkpoint"));
}

// Before: at the default 5 %, a rack of fewer than 20 nodes never acted on its one bad host.
TEST(NodeActions, OneBlamedNodeIsAlwaysActedOnWhateverTheShare) {
  RunBlame blame;
  blame.run_id = "r-9";
  blame.finished = true;
  for (int i = 0; i < 10; ++i) blame.nodes.push_back(fmt::format("gpu{:02}", i));
  blame.faults["gpu03"] = "test mesh: loss";
  EXPECT_FALSE(share_cap_note(blame, kDefaultMaxShare)) << "1 of 10 at 5 %";
  const NodeActionPlan plan = plan_node_actions(blame, {{"gpu03", {}}}, kDefaultMaxShare);
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_EQ(plan.actions[0].node, "gpu03");
  blame.faults["gpu04"] = "test mesh: loss";
  const auto capped = share_cap_note(blame, kDefaultMaxShare);
  ASSERT_TRUE(capped) << "2 of 10 at 5 %";
  EXPECT_THAT(*capped, HasSubstr("blames 2 of its 10 nodes (20 %), more than max_share 5 %: acting on none"));
  EXPECT_FALSE(share_cap_note(blame, 0.2)) << "2 of 10 at 20 %";
  RunBlame alone;
  alone.run_id = "r-10";
  alone.finished = true;
  alone.nodes = {"gpu01"};
  alone.faults["gpu01"] = "test plug: loss";
  EXPECT_TRUE(share_cap_note(alone, kDefaultMaxShare)) << "a run of one node blames all of it";
  EXPECT_FALSE(share_cap_note(alone, 1.0));
}

// Issue 63, before: a stream id whose multi-byte characters straddled the 200-byte cut of a fault
// text made `act --kubernetes` abort (the cut text then dumped with the strict UTF-8 handler).
TEST(NodeActions, AFaultTextIsCutOnACharacterBoundary) {
  plain_json report = fabric_report();
  std::string problem(199, 'x');
  for (int i = 0; i < 50; ++i) problem += "\xE2\x82\xAC";  // straddles the cut at every offset
  report["tests"][0]["localisation"]["hosts"][0]["problem"] = problem;
  const RunBlame blame = blame_from_report(report, "report.json");
  ASSERT_TRUE(blame.faults.contains("gpu03"));
  EXPECT_EQ(first_invalid_utf8(blame.faults.at("gpu03")), std::string_view::npos) << blame.faults.at("gpu03");
  const NodeActionPlan plan = plan_node_actions(blame, {{"gpu03", {}}}, 1.0);
  for (const auto& action : plan.actions) {
    EXPECT_EQ(first_invalid_utf8(action.reason), std::string_view::npos) << action.reason;
    EXPECT_LE(action.reason.size(), kMaxReasonBytes);
  }
}

TEST(NodeActions, AFaultTextIsCutToOneBoundedLine) {
  plain_json report = fabric_report();
  report["tests"][0]["localisation"]["hosts"][0]["problem"] = "line one\nline two " + std::string(1000, 'x');
  const RunBlame blame = blame_from_report(report, "report.json");
  EXPECT_EQ(blame.faults.at("gpu03").find('\n'), std::string::npos);
  const NodeActionPlan plan = plan_node_actions(blame, {{"gpu03", {}}}, 1.0);
  ASSERT_FALSE(plan.actions.empty());
  for (const auto& action : plan.actions) EXPECT_LE(action.reason.size(), kMaxReasonBytes);
}

TEST(SlurmNodes, SinfoLinesGiveEachNodeOnceWithItsDrainAndReason) {
  const auto nodes = parse_sinfo_nodes(
      "gpu01|idle|none\n"
      "gpu02|drained|tusk r-7: test mesh: loss on l1:h2 -> gpu02:p\n"
      "gpu02|drained|tusk r-7: test mesh: loss on l1:h2 -> gpu02:p\n"  // a second partition
      "gpu03|draining|RMA 4411\n"
      "gpu04|drained*|none\n"
      "garbage\n");
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_FALSE(nodes.at("gpu01").drained);
  EXPECT_TRUE(nodes.at("gpu01").reason.empty());
  EXPECT_TRUE(nodes.at("gpu02").drained);
  EXPECT_EQ(nodes.at("gpu02").reason, "tusk r-7: test mesh: loss on l1:h2 -> gpu02:p");
  EXPECT_TRUE(nodes.at("gpu03").drained);
  EXPECT_TRUE(nodes.at("gpu04").drained);
}

// The report the controller writes gives the node names and which passed, as the hand-written one.
TEST(ReportBlame, AReportTheControllerWroteNamesEachAgentsHostAsItsNode) {
  RunOutcome outcome;
  outcome.run_id = "r-8";
  AgentView agent;
  agent.name = "a1";
  agent.inventory.set_hostname("node-a1.cluster");
  agent.connected = true;
  outcome.agents.push_back(agent);
  const RunBlame blame = blame_from_report(plain_json::parse(report_json(outcome).dump()), "report.json");
  EXPECT_TRUE(blame.finished);
  EXPECT_EQ(blame.nodes, (std::vector<std::string>{"node-a1"}));
  EXPECT_EQ(blame.passed, (std::vector<std::string>{"node-a1"}));
}

// Issue 63, before: the node was the hostname the agent reported, so an agent holding lab-a's
// certificate that said it was lab-b got lab-b drained. The node is the one the run proved.
TEST(ReportBlame, TheNodeIsTheHostTheRunProvedNotTheHostnameTheAgentReported) {
  RunOutcome outcome;
  outcome.run_id = "r-12";
  for (const auto& [agent, reported, proven] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"lab-a", "lab-b", "lab-a"}, {"lab-b", "lab-b.example", "lab-b.example"}}) {
    AgentView view;
    view.name = agent;
    view.inventory.set_hostname(reported);
    view.node = proven;
    view.connected = true;
    outcome.agents.push_back(view);
  }
  const RunBlame blame = blame_from_report(plain_json::parse(report_json(outcome).dump()), "report.json");
  EXPECT_EQ(blame.node_of.at("lab-a"), "lab-a");
  EXPECT_EQ(blame.node_of.at("lab-b"), "lab-b");
  EXPECT_EQ(blame.nodes, (std::vector<std::string>{"lab-a", "lab-b"}));
}

// Issue 57, before: nodes are short host names, so hosts whose short names collide collapsed into
// one node and one's fault drained the other. Agents of one host are still one node.
TEST(ReportBlame, HostsWhoseShortNamesCollideKeepTheirFullNamesAndOneHostsAgentsAreOneNode) {
  RunOutcome outcome;
  outcome.run_id = "r-11";
  for (const auto& [agent, host] : std::vector<std::pair<std::string, std::string>>{{"a-nic0", "gpu01.rack1.example"},
                                                                                    {"a-nic1", "gpu01.rack1.example"},
                                                                                    {"b", "gpu01.rack2.example"},
                                                                                    {"c", "gpu02.rack1.example"}}) {
    AgentView view;
    view.name = agent;
    view.inventory.set_hostname(host);
    view.connected = true;
    outcome.agents.push_back(view);
  }
  const RunBlame blame = blame_from_report(plain_json::parse(report_json(outcome).dump()), "report.json");
  EXPECT_EQ(blame.nodes, (std::vector<std::string>{"gpu01.rack1.example", "gpu01.rack2.example", "gpu02"}));
  EXPECT_EQ(blame.node_of.at("a-nic0"), blame.node_of.at("a-nic1"));
}

// `act --exec`: the user's command gets the blame in its environment, not past the share cap, and
// a command that fails or runs too long is said.
class ActExec : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tusk-act-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "report.json") << fabric_report().dump();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  int act(std::vector<std::string> args) {
    CLI::App app;
    ActCommand command(app);
    args.insert(args.begin(), {"act", dir_.string()});
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.parse(args);
    out_.str("");
    err_.str("");
    return command.run_chosen(out_, err_).value_or(-1);
  }
  std::string file(const char* name) const {
    std::ifstream in(dir_ / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::filesystem::path dir_;
  std::ostringstream out_, err_;
};

TEST_F(ActExec, TheCommandGetsTheBlameInItsEnvironment) {
  const std::string record = (dir_ / "env.txt").string();
  ASSERT_EQ(act({"--exec",
                 "printf '%s|%s|%s|%s|%s' \"$TUSK_RUN_ID\" \"$TUSK_BLAMED_NODES\" \"$TUSK_PASSED_NODES\" "
                 "\"$TUSK_NETWORK_LINKS\" \"$TUSK_BLAMED\" > " +
                     record,
                 "--max-share", "100%"}),
            0)
      << err_.str();
  EXPECT_EQ(file("env.txt"),
            "r-7|gpu01\ngpu02\ngpu03\n|gpu04\n|l2:s1 -> s1:l2\n|"
            "gpu01\ttest plug step 1: stream rx:loopback of its own port failed\n"
            "gpu02\ttest mesh: loss on l1:h2 -> gpu02:p, cable C-2\n"
            "gpu03\ttest mesh: receiver cannot keep up\n");
  EXPECT_THAT(out_.str(), HasSubstr("ran: printf"));
}

// Before: --dry-run still needed a live Slurm or Kubernetes (raw sinfo or kubectl errors, exit 1).
TEST_F(ActExec, ADryRunNeedsNoSchedulerAndSaysWhatTheReportAloneAsks) {
  const char* path = std::getenv("PATH");
  const std::string saved = path ? path : "";
  ::setenv("PATH", dir_.c_str(), 1);  // neither sinfo nor kubectl is found
  const int slurm = act({"--slurm", "--dry-run", "--max-share", "100%"});
  const std::string slurm_out = out_.str(), slurm_err = err_.str();
  const int kubernetes = act({"--kubernetes", "--dry-run", "--max-share", "100%"});
  const std::string kube_out = out_.str(), kube_err = err_.str();
  const int capped = act({"--slurm", "--dry-run"});
  const std::string capped_err = err_.str();
  const int for_real = act({"--slurm", "--max-share", "100%"});
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_EQ(slurm, 0) << slurm_err;
  EXPECT_THAT(slurm_err, HasSubstr("cannot read Slurm's nodes"));
  EXPECT_THAT(slurm_err, HasSubstr("this dry run says what the report alone asks"));
  EXPECT_THAT(slurm_out, HasSubstr("would drain gpu02: tusk r-7: test mesh: loss on l1:h2 -> gpu02:p, cable C-2 "
                                   "(unless an operator drained it already)"));
  EXPECT_THAT(slurm_out, HasSubstr("would resume gpu04 if Tusk drained it"));
  EXPECT_EQ(kubernetes, 0) << kube_err;
  EXPECT_THAT(kube_out, HasSubstr("would label gpu03 tusk.io/burn-in=fail, taint NoSchedule"));
  EXPECT_THAT(kube_out, HasSubstr("would label gpu04 tusk.io/burn-in=pass"));
  EXPECT_EQ(capped, 1) << "3 of 5 nodes blamed, over 5 %: the dry run says the cap holds";
  EXPECT_THAT(capped_err, HasSubstr("acting on none"));
  EXPECT_EQ(for_real, 1) << "not a dry run: a scheduler that cannot be read is an error";
}

TEST_F(ActExec, NotPastTheCapNotInADryRunAndAFailureIsSaid) {
  const std::string touch = "touch " + (dir_ / "ran").string();
  EXPECT_EQ(act({"--exec", touch}), 1);  // 3 of 5 nodes blamed, over 5 %
  EXPECT_THAT(err_.str(), HasSubstr("acting on none"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "ran"));
  EXPECT_EQ(act({"--exec", touch, "--max-share", "100%", "--dry-run"}), 0);
  EXPECT_THAT(out_.str(), HasSubstr("would run: " + touch + " (3 blamed, 1 passed, 1 network links)"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "ran"));
  EXPECT_EQ(act({"--exec", "exit 3", "--max-share", "100%"}), 1);
  EXPECT_THAT(err_.str(), HasSubstr("exec 'exit 3' exited 3"));
  EXPECT_EQ(act({"--exec", "sleep 5", "--exec-timeout", "200ms", "--max-share", "100%"}), 1);
  EXPECT_THAT(err_.str(), HasSubstr("still running after"));
  EXPECT_EQ(act({}), 2);
  EXPECT_THAT(err_.str(), HasSubstr("say where to act"));
}

}  // namespace
}  // namespace tusk
