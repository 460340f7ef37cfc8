// `tusk-controller compare` as a command: its text and exit code for runs given as report.json
// files (no history needed).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <fstream>
#include <sstream>

#include "controller/history/history_commands.hpp"
#include "tests/controller/history/history_test_reports.hpp"

namespace tusk {
namespace {

using json = nlohmann::ordered_json;

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

CommandResult compare(const std::string& before, const std::string& after, const std::string& history) {
  CLI::App app{"test", "tusk-controller"};
  HistoryCommands commands(app);
  std::vector<std::string> args{history, "--history", after, before, "compare"};  // CLI11 takes them last first
  app.parse(args);
  std::ostringstream out, err;
  CommandResult result;
  result.exit_code = commands.run_chosen(out, err).value_or(-1);
  result.out = out.str();
  result.err = err.str();
  return result;
}

std::string write(const testing::HistoryScratch& scratch, const std::string& name, const json& report) {
  const std::string path = scratch.path(name);
  std::ofstream(path) << report.dump();
  return path;
}

// Before: two runs that measured nothing compared as "nothing got worse", exit 0.
TEST(CompareCommand, RunsThatShareNoStreamAreNothingComparedNotAPass) {
  testing::HistoryScratch scratch;
  json empty_a = testing::sample_report("run-a");
  json empty_b = testing::sample_report("run-b");
  empty_a["tests"] = json::array();
  empty_b["tests"] = json::array();
  const auto result =
      compare(write(scratch, "a.json", empty_a), write(scratch, "b.json", empty_b), scratch.path("h.sqlite"));
  EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
  EXPECT_NE(result.out.find("nothing compared: no stream of the same test, agent, stream id and peer is in both runs "
                            "(before: 0 stream(s), after: 0)"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(result.out.find("nothing got worse"), std::string::npos) << result.out;
}

// Before: runs whose tests differ (every earlier stream "missing") printed "WORSE ... (0 stream(s)
// compared)", exit 1, and --json said nothing_compared: false.
TEST(CompareCommand, RunsOfDifferentTestsAreNothingComparedNotWorse) {
  testing::HistoryScratch scratch;
  json a = testing::sample_report("run-a");
  json b = testing::sample_report("run-b");
  for (auto& test : b["tests"]) test["name"] = test["name"].get<std::string>() + "-renamed";
  const std::string before = write(scratch, "a.json", a), after = write(scratch, "b.json", b);
  const auto result = compare(before, after, scratch.path("h.sqlite"));
  EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
  EXPECT_NE(result.out.find("nothing compared: "), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("WORSE"), std::string::npos) << result.out;

  CLI::App app{"test", "tusk-controller"};
  HistoryCommands commands(app);
  std::vector<std::string> args{"--json", scratch.path("h.sqlite"), "--history", after, before, "compare"};
  app.parse(args);
  std::ostringstream out, err;
  EXPECT_EQ(commands.run_chosen(out, err).value_or(-1), 2) << out.str() << err.str();
  const json parsed = json::parse(out.str());
  EXPECT_EQ(parsed["nothing_compared"], true) << out.str();
  EXPECT_EQ(parsed["worse"], false) << out.str();
  EXPECT_EQ(parsed["compared_streams"], 0) << out.str();
}

TEST(CompareCommand, TheSameRunTwiceComparesEveryStreamAndPasses) {
  testing::HistoryScratch scratch;
  const std::string a = write(scratch, "a.json", testing::sample_report("run-a"));
  const auto result = compare(a, a, scratch.path("h.sqlite"));
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("nothing got worse: "), std::string::npos) << result.out;
}

}  // namespace
}  // namespace tusk
