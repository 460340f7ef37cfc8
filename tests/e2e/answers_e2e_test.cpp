// Issue 57: answers an operator acts on, each true for its input, on the real controller with agent
// doubles on 127.0.0.1. `cabling: enforce` that cannot check refuses to start; `cabling: check` that
// cannot check says so in the report; neither passes silently.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "tests/e2e/control_plane_fixture.hpp"

namespace tusk::testing {
namespace {

using namespace std::chrono_literals;

// The agents' data-plane addresses in no topology, and no switch with a management address: the
// file is valid, and nothing can hear LLDP on any cable it names.
constexpr auto kTopology = R"(devices:
  lab-a:
    interfaces: {p0: 10.99.0.1}
  lab-b:
    interfaces: {p0: 10.99.0.2}
  leaf:
    interfaces: {e1: ~, e2: ~}
links:
  - lab-a:p0 <-> leaf:e1
  - lab-b:p0 <-> leaf:e2
)";

class CablingAnswers : public ControlPlaneE2E {
 protected:
  std::string profile_with(const std::string& cabling) {
    std::string text = kProfileTemplate;
    text.replace(text.find("{duration}"), 10, "1s");
    return write_profile_text("cabling: " + cabling + "\n" + text);
  }
  std::string topology() {
    const std::string path = dir_ + "/topology.yaml";
    std::ofstream(path) << kTopology;
    return path;
  }
};

// Before: the run passed, exit 0, nothing said, report.json "cabling": null.
TEST_F(CablingAnswers, EnforceWithoutATopologyFileRefusesToStart) {
  auto controller = start_controller(profile_with("enforce"), "no-topology");
  ASSERT_EQ(controller->wait(30s), 2) << controller->log();
  EXPECT_NE(controller->log().find("cabling: enforce checks the cabling against a topology file before any traffic: "
                                   "give --topology FILE"),
            std::string::npos)
      << controller->log();
  EXPECT_NE(controller->log().find("nothing was started"), std::string::npos) << controller->log();
  EXPECT_FALSE(fs::exists(dir_ + "/no-topology/report.json"));
}

// How long a switch that answers nothing is waited for: bounded both ways, the flag named.
TEST_F(CablingAnswers, AnSnmpTimeoutOrRetryCountOutsideItsRangeIsRefusedNamingTheFlag) {
  const std::map<std::string, std::vector<std::string>> refused{
      {"--snmp-timeout: 10 ms is outside 100ms..60s", {"--snmp-timeout", "10ms"}},
      {"--snmp-timeout: 61000 ms is outside 100ms..60s", {"--snmp-timeout", "61s"}},
      {"--snmp-timeout: ", {"--snmp-timeout", "soon"}},
      {"--snmp-retries: 11 is outside 0..10", {"--snmp-retries", "11"}},
      {"--snmp-retries: -1 is outside 0..10", {"--snmp-retries", "-1"}},
  };
  int run = 0;
  for (const auto& [message, flags] : refused) {
    SCOPED_TRACE(flags[1]);
    const std::string out = "refused-" + std::to_string(run++);
    auto controller = start_controller(profile_with("check"), out, flags);
    ASSERT_EQ(controller->wait(30s), 2) << controller->log();
    EXPECT_NE(controller->log().find(message), std::string::npos) << controller->log();
    EXPECT_FALSE(fs::exists(dir_ + "/" + out + "/report.json"));
  }
}

TEST_F(CablingAnswers, EnforceWithNothingThatHearsLldpStartsNoTraffic) {
  auto controller = start_controller(profile_with("enforce"), "nothing-heard", {"--topology", topology()});
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);
  ASSERT_EQ(controller->wait(60s), 2) << controller->log();
  EXPECT_NE(controller->log().find("cabling: enforce: nothing was checked, so no traffic was started: no switch to "
                                   "read"),
            std::string::npos)
      << controller->log();
  const json report = read_report("nothing-heard");
  ASSERT_TRUE(report["cabling"].is_object()) << report.dump(1).substr(0, 2000);
  EXPECT_EQ(report["cabling"]["checked"], false);
  EXPECT_EQ(report["tests"].size(), 0u) << "no test ran";
  EXPECT_EQ(agent_a->log().find("test 0 started"), std::string::npos) << agent_a->log();
}

TEST_F(CablingAnswers, CheckThatCannotCheckRunsAndSaysSo) {
  auto controller = start_controller(profile_with("check"), "check-nothing", {"--topology", topology()});
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);
  ASSERT_EQ(controller->wait(60s), 0) << controller->log();
  const json report = read_report("check-nothing");
  ASSERT_TRUE(report["cabling"].is_object()) << report.dump(1).substr(0, 2000);
  EXPECT_EQ(report["cabling"]["checked"], false);
  EXPECT_NE(report["cabling"]["text"].get<std::string>().find("cabling: not checked: no switch to read"),
            std::string::npos)
      << report["cabling"].dump(1);
  EXPECT_NE(controller->log().find("cabling: not checked: "), std::string::npos) << "in the summary too";
}

// Issue 57, before: a filter that matched nothing printed nothing with exit 0; `series` wrote
// -wal and -shm files into the run's directory; `series RUN/report.json` said "file is not a
// database"; `report` or `act` given a YAML file spoke of json.exception.parse_error.
TEST_F(ControlPlaneE2E, TheSeriesAndReportCommandsSayWhatTheyWereGiven) {
  auto controller = start_controller(write_profile("1s"), "run");
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);
  ASSERT_EQ(controller->wait(60s), 0) << controller->log();
  const auto command = [&](std::vector<std::string> words, const std::string& log) {
    words.insert(words.begin(), tusk::build_paths::controller_bin());
    Process process(words, dir_ + "/" + log);
    const int status = process.wait(30s).value_or(-1);
    return std::pair{status, process.log()};
  };
  const std::string run = dir_ + "/run";
  {
    const auto [status, log] = command({"series", run}, "series.log");
    EXPECT_EQ(status, 0) << log;
    EXPECT_NE(log.find("lab-a"), std::string::npos) << log;
  }
  for (const auto& entry : fs::directory_iterator(run)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name.find("-wal") == std::string::npos && name.find("-shm") == std::string::npos)
        << name << ": the reader wrote into the run's directory";
  }
  {
    const auto [status, log] = command({"series", run, "--agent", "nobody"}, "series-none.log");
    EXPECT_EQ(status, 2) << log;
    EXPECT_NE(log.find("series: no sample matches --agent nobody in " + run), std::string::npos) << log;
  }
  {
    const auto [status, log] = command({"series", run + "/report.json"}, "series-report.log");
    EXPECT_EQ(status, 2) << log;
    EXPECT_NE(log.find("not a series file (an SQLite database)"), std::string::npos) << log;
  }
  const std::string yaml = write_profile("1s");
  for (const std::vector<std::string>& words :
       {std::vector<std::string>{"report", yaml}, std::vector<std::string>{"act", yaml, "--exec", "true"}}) {
    const auto [status, log] = command(words, "yaml-" + words[0] + ".log");
    EXPECT_EQ(status, 2) << log;
    EXPECT_EQ(log.find("json.exception"), std::string::npos) << log;
    EXPECT_NE(log.find("profile.yaml: not a Tusk report.json"), std::string::npos) << log;
  }
}

// Issue 57, before: `report`, `series` and `act` took run directories but not run ids, which
// `compare` and `history` print.
TEST_F(ControlPlaneE2E, ReportSeriesAndActTakeARunIdOfTheHistory) {
  auto controller = start_controller(write_profile("1s"), "run");
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);
  ASSERT_EQ(controller->wait(60s), 0) << controller->log();
  const std::string run_id = read_report("run")["run_id"];
  const std::map<std::string, std::string> home{{"XDG_DATA_HOME", dir_ + "/xdg"}};
  const auto command = [&](std::vector<std::string> words, const std::string& log) {
    words.insert(words.begin(), tusk::build_paths::controller_bin());
    Process process(words, dir_ + "/" + log, home);
    const int status = process.wait(30s).value_or(-1);
    return std::pair{status, process.log()};
  };
  {
    const auto [status, log] = command({"report", run_id, "--text"}, "unknown.log");
    EXPECT_EQ(status, 2) << log;
    EXPECT_NE(log.find(run_id + ": no such run directory or file, and no history at"), std::string::npos) << log;
  }
  ASSERT_EQ(
      command({"history", "--import", dir_ + "/run", "--history", dir_ + "/xdg/tusk/history.sqlite"}, "import.log")
          .first,
      0);
  {
    const auto [status, log] = command({"report", run_id, "--text"}, "report-id.log");
    EXPECT_EQ(status, 0) << log;
    EXPECT_EQ(log.rfind("Tusk run " + run_id, 0), 0u) << log;
  }
  {
    const auto [status, log] = command({"series", run_id, "--agent", "lab-a"}, "series-id.log");
    EXPECT_EQ(status, 0) << log;
    EXPECT_NE(log.find("lab-a"), std::string::npos) << log;
  }
  {
    const auto [status, log] = command({"act", run_id, "--exec", "true", "--dry-run"}, "act-id.log");
    EXPECT_EQ(status, 0) << log;
    EXPECT_NE(log.find("would run: true"), std::string::npos) << log;
  }
  {
    const auto [status, log] = command({"report", "no-such-run", "--text"}, "report-none.log");
    EXPECT_EQ(status, 2) << log;
    EXPECT_NE(log.find("no-such-run: no such run directory or file, nor a run in"), std::string::npos) << log;
  }
}

// Issue 57, before: a run directory with a series file and no report.json could not be drawn.
TEST_F(ControlPlaneE2E, ARunThatLeftNoReportIsDrawnFromItsSeriesFile) {
  auto controller = start_controller(write_profile("2s"), "run");
  auto agent_a = start_agent("lab-a", port_);
  auto agent_b = start_agent("lab-b", port_);
  ASSERT_EQ(controller->wait(60s), 0) << controller->log();
  const json written = read_report("run");
  for (const char* file : {"report.json", "report.html", "junit.xml"}) fs::remove(dir_ + "/run/" + file);
  Process text({tusk::build_paths::controller_bin(), "report", dir_ + "/run", "--text"}, dir_ + "/text.log");
  ASSERT_EQ(text.wait(30s), 0) << text.log();
  const std::string said = text.log();
  EXPECT_NE(said.find("has no report.json: drawing the run from its series.sqlite"), std::string::npos) << said;
  EXPECT_NE(said.find("Tusk run " + written["run_id"].get<std::string>()), std::string::npos) << said;
  EXPECT_NE(said.find("incomplete: the run left no report.json; drawn from its series file"), std::string::npos)
      << said;
  for (const std::string agent : {"lab-a", "lab-b"}) EXPECT_NE(said.find(agent), std::string::npos) << said;
  Process page({tusk::build_paths::controller_bin(), "report", dir_ + "/run"}, dir_ + "/page.log");
  ASSERT_EQ(page.wait(60s), 0) << page.log();
  EXPECT_TRUE(fs::exists(dir_ + "/run/report.html"));
  EXPECT_FALSE(fs::exists(dir_ + "/run/report.json")) << "drawing writes the page alone";
}

// Issue 57: baseline regressions could only warn. With baseline_fail they fail a run that its own
// thresholds pass: here bit errors within a loose max_ber, where the baseline had none.
TEST_F(ControlPlaneE2E, BaselineFailFailsARunThatGotWorseThoughItsThresholdsPass) {
  std::string text = kProfileTemplate;
  text.replace(text.find("{duration}"), 10, "2s");
  text.replace(text.find("max_ber: 1e-12"), 14, "max_ber: 0.5");
  text += "baseline: last\nbaseline_fail: true\n";
  const std::string profile = write_profile_text(text);
  const std::map<std::string, std::string> home{{"XDG_DATA_HOME", dir_ + "/xdg"}};
  {
    auto first = start_controller(profile, "first", {}, home);
    auto agent_a = start_agent("lab-a", port_);
    auto agent_b = start_agent("lab-b", port_);
    ASSERT_EQ(first->wait(60s), 0) << first->log();
  }
  Process import({tusk::build_paths::controller_bin(), "history", "--import", dir_ + "/first", "--history",
                  dir_ + "/xdg/tusk/history.sqlite"},
                 dir_ + "/import.log");
  ASSERT_EQ(import.wait(30s), 0) << read_file(dir_ + "/import.log");
  auto second = start_controller(profile, "second", {}, home);
  const std::map<std::string, std::string> errors{{"TUSK_DOUBLE_BIT_ERRORS_PER_S", "50"}};
  auto agent_a = start_agent("lab-a", port_, errors);
  auto agent_b = start_agent("lab-b", port_, errors);
  ASSERT_EQ(second->wait(60s), 1) << second->log();
  const json report = read_report("second");
  for (const auto& test : report["tests"]) EXPECT_EQ(test["verdict"], "pass") << "its thresholds pass it";
  EXPECT_GT(report["baseline"]["regression_count"].get<int>(), 0) << report["baseline"].dump(1);
  EXPECT_EQ(report["exit_code"], 1);
  EXPECT_NE(report["conclusion"].get<std::string>().find("regression(s) against baseline"), std::string::npos)
      << report["conclusion"];
  EXPECT_NE(second->log().find("(baseline_fail) (exit 1)"), std::string::npos) << second->log();
}

}  // namespace
}  // namespace tusk::testing
