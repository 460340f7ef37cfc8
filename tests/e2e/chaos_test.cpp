// Chaos on real processes: agents killed, the controller killed and restarted, a telemetry
// backlog larger than the connection may queue, and a report directory that cannot be written.
// Each must be reported, never silently dropped, and no record may be lost or reordered.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "tests/e2e/control_plane_fixture.hpp"
#include "tests/e2e/cutting_proxy.hpp"

namespace tusk::testing {
namespace {

using namespace std::chrono_literals;

// Every pair of lab-a..lab-d, a step at a time: three steps of `step` each.
std::string four_agent_schedule(const std::string& step, const std::string& thresholds = "") {
  return R"(name: e2e-schedule
agents:
  hosts: [lab-a, lab-b, lab-c, lab-d]
  wait: 20s
tests:
  - name: every pair
    engine: dpdk
    topology: shift
    shifts: all
    step: )" +
         step + R"(
    rate: 1kpps
    frame_size: 1000B
)" + thresholds;
}

std::size_t faults_containing(const json& report, const std::string& agent, const std::string& text) {
  std::size_t found = 0;
  for (const auto& fault : report["faults"]) {
    if ((agent.empty() || fault["agent"] == agent) &&
        fault["message"].get<std::string>().find(text) != std::string::npos) {
      ++found;
    }
  }
  return found;
}

TEST_F(ControlPlaneE2E, AnAgentKilledMidRunIsReportedLostAndTheOtherCarriesOn) {
  auto controller = start_controller(write_profile("8s"), "report", {"--lease", "1s"});
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);
  ASSERT_TRUE(wait_for_text(agent_b->log_path(), "test 0 started", 30s)) << agent_b->log();
  std::this_thread::sleep_for(2s);
  agent_b->signal(SIGKILL);

  ASSERT_EQ(controller->wait(60s), 3) << controller->log();
  const json report = read_report("report");
  const json& test = report["tests"][0];
  const json& a = agent_entry(test, "lab-a");
  EXPECT_EQ(a["sample_ranges"], one_to(8)) << "the survivor's samples are all there";
  EXPECT_TRUE(a["completed"].get<bool>());
  const json& b = agent_entry(test, "lab-b");
  EXPECT_TRUE(b["lost"].get<bool>()) << b.dump(2);
  EXPECT_GE(b["samples_received"].get<int>(), 1) << "what it sent before it died is kept";
  EXPECT_GE(faults_containing(report, "lab-b", "agent lost"), 1u) << report["faults"].dump(2);
  EXPECT_EQ(faults_containing(report, "lab-a", ""), 0u) << report["faults"].dump(2);
  EXPECT_TRUE(agent_a->running()) << "the other agent is untouched";
}

// Issue 59: a schedule's step whose plan an agent never answers (hung mid-prepare, its connection
// then dropped) does not run, and the schedule goes on without it: of 4 agents' 3 steps, the second
// is not run (its 4 pairs uncovered), the third runs among the other three (lab-d's 2 pairs
// uncovered), and the run ends incomplete.
TEST_F(ControlPlaneE2E, AScheduleStepWhosePlanAnAgentNeverAnswersIsNotRunAndTheNextGoesOn) {
  ASSERT_TRUE(make_certs(dir_ + "/certs", {"lab-c", "lab-d"}));
  const std::string profile = write_profile_text(four_agent_schedule("2s", "    thresholds:\n      max_ber: 1e-12\n"));
  auto controller = start_controller(profile, "report", {"--lease", "1s"});
  std::vector<std::unique_ptr<Process>> agents;
  for (const std::string name : {"lab-a", "lab-b", "lab-c"}) agents.push_back(start_agent(name, port_));
  agents.push_back(start_agent("lab-d", port_, {{"TUSK_DOUBLE_DEAF_AT_TEST", "2"}}));  // step 2 is test 2
  ASSERT_EQ(controller->wait(120s), 3) << controller->log();
  const json report = read_report("report");
  const json& test = report["tests"][0];
  const json& steps = test["method"]["steps"];
  ASSERT_EQ(steps.size(), 3u) << controller->log();
  EXPECT_EQ(steps[0]["verdict"], "pass");
  EXPECT_TRUE(steps[0]["not_covered"].empty());
  EXPECT_EQ(steps[1]["verdict"], "incomplete");
  ASSERT_EQ(steps[1]["not_covered"].size(), 4u) << steps[1].dump(1);
  for (const auto& pair : steps[1]["not_covered"]) EXPECT_EQ(pair["why"], "no answer to the step's plan from lab-d");
  EXPECT_EQ(steps[2]["verdict"], "pass") << steps[2]["test"]["problems"].dump(1);
  ASSERT_EQ(steps[2]["not_covered"].size(), 2u) << steps[2].dump(1);
  for (const auto& pair : steps[2]["not_covered"]) EXPECT_EQ(pair["why"], "lab-d not connected");
  bool said = false;
  for (const auto& problem : test["problems"]) {
    said |= problem.get<std::string>().find("6 of 12 planned pairs not covered") != std::string::npos;
  }
  EXPECT_TRUE(said) << test["problems"].dump(1);
  EXPECT_EQ(test["verdict"], "incomplete");
  // Once lab-d was gone as long as a lost agent is, the step stopped waiting for its answer.
  EXPECT_NE(controller->log().find("lab-d lost before answering its plan: the step does not run"), std::string::npos)
      << controller->log();
}

// Issue 59: a night's schedule whose controller is killed leaves the steps it finished in its
// checkpoint, not only the step it was running: killed in the third of three steps, report.json
// holds the schedule (incomplete) with its first two steps (their streams counted: passing, they
// left memory with their step), then the step under way, and draws.
TEST_F(ControlPlaneE2E, AControllerKilledMidScheduleLeavesTheStepsItFinishedInItsCheckpoint) {
  ASSERT_TRUE(make_certs(dir_ + "/certs", {"lab-c", "lab-d"}));
  const std::string profile = write_profile_text(four_agent_schedule("3s"));
  auto controller = start_controller(profile, "report", {"--lease", "1s", "--checkpoint", "1s"});
  std::vector<std::unique_ptr<Process>> agents;
  for (const std::string name : {"lab-a", "lab-b", "lab-c", "lab-d"}) agents.push_back(start_agent(name, port_));
  ASSERT_TRUE(wait_for_text(agents[0]->log_path(), "test 3 started", 60s)) << controller->log();
  std::this_thread::sleep_for(1500ms);  // a checkpoint of the third step
  controller->signal(SIGKILL);
  ASSERT_TRUE(controller->wait(5s).has_value());

  const json report = read_report("report");
  EXPECT_EQ(report["status"], "running");
  ASSERT_EQ(report["tests"].size(), 2u) << report["conclusion"];
  const json& schedule = report["tests"][0];
  EXPECT_EQ(schedule["name"], "every pair");
  EXPECT_EQ(schedule["verdict"], "incomplete");
  ASSERT_EQ(schedule["method"]["kind"], "shift");
  const json& steps = schedule["method"]["steps"];
  ASSERT_EQ(steps.size(), 2u);
  for (const auto& step : steps) {
    EXPECT_EQ(step["verdict"], "pass") << step["test"]["problems"].dump(1);
    EXPECT_EQ(step["pairs"], 4);
    EXPECT_EQ(step["streams"], 4) << "each finished step's streams are counted in the checkpoint";
    EXPECT_TRUE(step["test"]["streams"].empty()) << "a finished step's passing streams left memory with it";
  }
  EXPECT_EQ(report["tests"][1]["index"], 3) << "the step under way follows";

  Process draw({tusk::build_paths::controller_bin(), "report", dir_ + "/report"}, dir_ + "/draw.log");
  EXPECT_EQ(draw.wait(60s), 0) << draw.log();
}

TEST_F(ControlPlaneE2E, AgentStopsTrafficWhenItsControllerDiesAndTellsTheNextOne) {
  auto first = start_controller(write_profile("60s"), "first", {"--lease", "1s"});
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);
  ASSERT_TRUE(wait_for_text(agent_a->log_path(), "test 0 started", 30s)) << agent_a->log();
  first->signal(SIGKILL);
  ASSERT_TRUE(first->wait(5s).has_value());

  // Each agent stops on its own lease (1 s), and says so; the wait only bounds a hung test.
  const std::string lease_ran_out = "no word from the controller for 1000 ms: traffic stopped";
  EXPECT_TRUE(wait_for_text(agent_a->log_path(), lease_ran_out, 10s)) << agent_a->log();
  EXPECT_TRUE(wait_for_text(agent_b->log_path(), lease_ran_out, 10s)) << agent_b->log();

  // The next controller hears why the traffic stopped, as soon as the agents reconnect, and runs.
  auto second = start_controller(write_profile("1s"), "second");
  ASSERT_EQ(second->wait(60s), 0) << second->log();
  const json report = read_report("second");
  EXPECT_EQ(faults_containing(report, "", "LEASE_EXPIRED"), 2u) << report["faults"].dump(2);
  for (const std::string name : {"lab-a", "lab-b"}) {
    EXPECT_EQ(agent_entry(report["tests"][0], name)["sample_ranges"], one_to(1)) << name;
  }
}

// Issue 57, before: a 60 s test whose controller was SIGKILLed 25 s in left only series.sqlite, the
// first checkpoint coming at one minute. The first is written as the first test starts.
TEST_F(ControlPlaneE2E, AControllerKilledBeforeItsFirstIntervalStillLeavesAReport) {
  std::string profile = kProfileTemplate;
  profile.replace(profile.find("{duration}"), 10, "60s");
  auto controller = start_controller(write_profile_text(profile), "early");  // the default --checkpoint 1m
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);
  ASSERT_TRUE(wait_for_text(agent_a->log_path(), "test 0 started", 30s)) << agent_a->log();
  std::this_thread::sleep_for(2s);
  controller->signal(SIGKILL);
  ASSERT_TRUE(controller->wait(5s).has_value());
  const json report = read_report("early");
  EXPECT_EQ(report["status"], "running") << report.dump(2).substr(0, 2000);
  EXPECT_NE(report["conclusion"].get<std::string>().find("incomplete: still running test 0"), std::string::npos)
      << report["conclusion"];
  ASSERT_EQ(report["tests"].size(), 1u);
  EXPECT_EQ(report["tests"][0]["name"], "double-pairs");
  EXPECT_EQ(report["agents"].size(), 2u) << "who took part";
  Process draw({tusk::build_paths::controller_bin(), "report", dir_ + "/early"}, dir_ + "/draw-early.log");
  EXPECT_EQ(draw.wait(60s), 0) << draw.log();
  EXPECT_TRUE(fs::exists(dir_ + "/early/report.html"));
}

// A controller killed while it still waits for its agents leaves a report that says so.
TEST_F(ControlPlaneE2E, AControllerKilledWhileWaitingForAgentsLeavesAReportThatSaysSo) {
  auto controller = start_controller(write_profile("5s"), "waiting");
  ASSERT_TRUE(wait_for_text(controller->log_path(), "waiting up to", 15s)) << controller->log();
  std::this_thread::sleep_for(500ms);
  controller->signal(SIGKILL);
  ASSERT_TRUE(controller->wait(5s).has_value());
  const json report = read_report("waiting");
  EXPECT_EQ(report["status"], "running") << report.dump(2).substr(0, 2000);
  EXPECT_NE(report["conclusion"].get<std::string>().find("incomplete: no test had started at this checkpoint"),
            std::string::npos)
      << report["conclusion"];
  EXPECT_TRUE(report["tests"].empty());
  Process draw({tusk::build_paths::controller_bin(), "report", dir_ + "/waiting", "--text"},
               dir_ + "/draw-waiting.log");
  EXPECT_EQ(draw.wait(60s), 0) << draw.log();
  EXPECT_NE(draw.log().find("incomplete: no test had started"), std::string::npos) << draw.log();
}

// A controller killed mid-test leaves its last checkpoint as report.json (marked running, its
// conclusion saying the run never finished) and the series file, which holds at least every
// sample the checkpoint counted, gapless; `tusk-controller report` draws the checkpoint.
TEST_F(ControlPlaneE2E, AControllerKilledMidTestLeavesItsLastCheckpointAndTheSeriesFile) {
  std::string profile = kProfileTemplate;
  profile.replace(profile.find("{duration}"), 10, "60s\n    sample_interval: 100ms");
  auto controller = start_controller(write_profile_text(profile), "report", {"--lease", "1s", "--checkpoint", "1s"});
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);
  ASSERT_TRUE(wait_for_text(agent_a->log_path(), "test 0 started", 30s)) << agent_a->log();
  std::this_thread::sleep_for(4500ms);
  controller->signal(SIGKILL);
  ASSERT_TRUE(controller->wait(5s).has_value());

  const json report = read_report("report");
  EXPECT_EQ(report["status"], "running") << report.dump(2).substr(0, 2000);
  EXPECT_EQ(report["series_file"], "series.sqlite");
  EXPECT_NE(report["conclusion"].get<std::string>().find("incomplete: still running test 0"), std::string::npos)
      << report["conclusion"];
  ASSERT_EQ(report["tests"].size(), 1u);
  const json& test = report["tests"][0];
  EXPECT_EQ(test["verdict"], "fail") << "a test cut short never reads as a pass";
  std::map<std::string, std::uint32_t> counted;  // by agent: the highest sample the checkpoint counts
  for (const std::string name : {"lab-a", "lab-b"}) {
    const json& agent = agent_entry(test, name);
    ASSERT_EQ(agent["sample_ranges"].size(), 1u) << agent.dump(2);
    EXPECT_EQ(agent["sample_ranges"][0][0], 1);
    counted[name] = agent["sample_ranges"][0][1].get<std::uint32_t>();
    EXPECT_GE(counted[name], 20u) << "at least 2 s of samples before the last checkpoint";
    EXPECT_EQ(agent["stop_reason"], "still running at the checkpoint");
  }
  ASSERT_EQ(test["streams"].size(), 2u);
  const auto rows = series_rows("report");
  std::map<std::string, std::vector<json>> by_stream;
  for (const auto& row : rows)
    by_stream[row["agent"].get<std::string>() + " " + row["stream_id"].get<std::string>()].push_back(row);
  for (const auto& stream : test["streams"]) {
    const std::string agent = stream["agent"];
    const auto& stream_rows = by_stream[agent + " " + stream["stream_id"].get<std::string>()];
    ASSERT_GE(stream_rows.size(), counted[agent]) << "every sample the checkpoint counted is in the series file";
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < stream_rows.size(); ++i) {
      ASSERT_EQ(stream_rows[i]["sample"], i + 1);
      if (i < counted[agent]) bits += stream_rows[i]["counters"].value("bits_compared", std::uint64_t{0});
    }
    EXPECT_EQ(bits, stream["counters"]["bits_compared"].get<std::uint64_t>())
        << "the checkpoint's counters are the series' sum up to its last sample";
    // Its bins, read from the live stream as the checkpoint was written: every sample it counted.
    std::uint64_t binned = 0;
    for (const auto& count : stream["bins"]["samples"]) binned += count.get<std::uint64_t>();
    EXPECT_GE(binned, counted[agent]) << stream["bins"].dump();
  }

  // The checkpoint draws as any report does.
  Process draw({tusk::build_paths::controller_bin(), "report", dir_ + "/report"}, dir_ + "/draw.log");
  EXPECT_EQ(draw.wait(60s), 0) << draw.log();
  EXPECT_TRUE(fs::exists(dir_ + "/report/report.html"));
}

// An outage long enough that the agent's unacknowledged telemetry outgrows what its connection
// may queue: after the reconnect it must drain in windows, not flood and be cut again.
TEST_F(ControlPlaneE2E, ATelemetryBacklogLargerThanTheSendQueueDrainsCompletelyAfterAReconnect) {
  const int proxy_port = free_port();
  CuttingProxy proxy(proxy_port, port_);
  std::string profile = kProfileTemplate;
  profile.replace(profile.find("{duration}"), 10, "10s\n    sample_interval: 100ms");
  auto controller = start_controller(write_profile_text(profile), "report", {"--lease", "10s"});
  auto agent_a = start_agent("lab-a", port_);
  // 100 streams make a sample of about 15 KB: 3 s away is about 450 KB, against a 128 KiB queue.
  auto agent_b =
      start_agent("lab-b", proxy_port, {{"TUSK_DOUBLE_STREAMS_PER_PEER", "100"}}, "", {"--send-queue", "128KiB"});

  ASSERT_TRUE(wait_for_text(agent_b->log_path(), "test 0 started", 30s)) << agent_b->log();
  std::this_thread::sleep_for(2s);
  proxy.cut();
  std::this_thread::sleep_for(3s);
  proxy.restore();

  ASSERT_EQ(controller->wait(60s), 0) << controller->log();
  const json report = read_report("report");
  const json& b = agent_entry(report["tests"][0], "lab-b");
  EXPECT_EQ(b["sample_ranges"], one_to(100));
  EXPECT_EQ(b["samples_made"], 100);
  EXPECT_EQ(faults_containing(report, "lab-b", "never arrived"), 0u) << report["faults"].dump(2);
  EXPECT_EQ(agent_b->log().find("peer is not reading"), std::string::npos) << agent_b->log();
  EXPECT_TRUE(agent_b->running()) << agent_b->log();
  for (const auto& agent : report["agents"]) {
    if (agent["name"] == "lab-b") {
      EXPECT_EQ(agent["connections"], 2) << "one cut, one reconnect: the drain itself never cut it";
      EXPECT_EQ(agent["records_missing"], 0);
    }
  }
}

TEST_F(ControlPlaneE2E, AReportDirectoryThatCannotBeWrittenIsFoundBeforeAnythingStarts) {
  std::ofstream(dir_ + "/a-file") << "not a directory\n";
  auto controller = start_controller(write_profile("2s"), "a-file/report");
  auto agent_a = start_agent("lab-a", port_);
  ASSERT_EQ(controller->wait(30s), 2) << controller->log();
  EXPECT_NE(controller->log().find("--out: cannot create report directory '" + dir_ + "/a-file/report'"),
            std::string::npos)
      << controller->log();
  EXPECT_NE(controller->log().find("nothing was started"), std::string::npos);
  EXPECT_EQ(agent_a->log().find("test 0 started"), std::string::npos);
}

TEST_F(ControlPlaneE2E, AReportDirectoryLostMidRunSendsTheReportElsewhereAndSaysSo) {
  const std::string tmp = dir_ + "/tmp";
  fs::create_directories(tmp);
  // TMPDIR is where the controller falls back to; the controller's environment is the test's.
  const char* before = std::getenv("TMPDIR");
  const std::string tmpdir_before = before ? before : "";
  setenv("TMPDIR", tmp.c_str(), 1);
  auto controller = start_controller(write_profile("3s"), "report");
  if (before) {
    setenv("TMPDIR", tmpdir_before.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);
  ASSERT_TRUE(wait_for_text(agent_a->log_path(), "test 0 started", 30s)) << agent_a->log();
  // A directory replaced by a file: even root cannot write into it.
  fs::remove_all(dir_ + "/report");
  std::ofstream(dir_ + "/report") << "in the way\n";

  ASSERT_EQ(controller->wait(60s), 4) << controller->log();
  const std::string log = controller->log();
  EXPECT_NE(log.find("cannot create report directory '" + dir_ + "/report'"), std::string::npos) << log;
  EXPECT_NE(log.find("the run's own exit code would have been 0"), std::string::npos) << log;
  std::vector<fs::path> reports;
  for (const auto& entry : fs::recursive_directory_iterator(tmp)) {
    if (entry.path().filename() == "report.json") reports.push_back(entry.path());
  }
  ASSERT_EQ(reports.size(), 1u) << log;
  EXPECT_NE(log.find("in " + reports[0].parent_path().string() + " instead"), std::string::npos) << log;
  std::ifstream file(reports[0]);
  const json report = json::parse(file);
  EXPECT_EQ(agent_entry(report["tests"][0], "lab-a")["sample_ranges"], one_to(3));
}

}  // namespace
}  // namespace tusk::testing
