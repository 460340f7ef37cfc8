// `run --resume RUN_DIR` before anything starts: which runs it takes up, what it refuses (each
// refusal naming the file and why, with nothing of the directory moved), and how the first part's
// files are set aside for the new run's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "controller/method/schedule_ledger.hpp"
#include "controller/run_resume.hpp"
#include "tests/support/series_scratch.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class RunResume : public ::testing::Test {
 protected:
  void SetUp() override {
    write("profile.yaml", "name: night\n");
    write("topology.yaml", "devices: []\n");
    LedgerIdentity identity;
    identity.run_id = "20261207T000000Z-abcd";
    identity.profile_digest = file_digest(path("profile.yaml"));
    identity.topology_digest = file_digest(path("topology.yaml"));
    identity.test_name = "every pair";
    MethodResult so_far;
    so_far.kind = MethodKind::Shift;
    so_far.steps.emplace_back().label = "shift 1";
    so_far.step_outcomes.emplace_back().index = 1;
    write_schedule_ledger(dir_, identity, so_far, {}, nullptr);
    write("report.json", R"({"run_id": "20261207T000000Z-abcd", "tests": []})");
    write("series.sqlite", "rows");
    write("series.sqlite-wal", "log");
  }
  std::string path(const std::string& name) const { return (fs::path(dir_) / name).string(); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path(name)) << text; }
  std::string resume_error(const std::string& profile, const std::string& topology) const {
    try {
      open_resumed_run(dir_, profile, topology, nullptr);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }

  testing::ScratchDir scratch_{"resume"};
  std::string dir_ = scratch_.path.string();
};

TEST_F(RunResume, ARunKilledMidScheduleIsTakenUpAndItsFilesAreSetAsideUnderItsRunId) {
  const auto ledger = open_resumed_run(dir_, path("profile.yaml"), path("topology.yaml"), nullptr);
  ASSERT_TRUE(ledger);
  EXPECT_EQ(ledger->identity.run_id, "20261207T000000Z-abcd");
  ASSERT_EQ(ledger->steps.size(), 1u);
  EXPECT_EQ(ledger->steps[0].label, "shift 1");
  EXPECT_FALSE(fs::exists(path("report.json")));
  EXPECT_FALSE(fs::exists(path("series.sqlite")));
  EXPECT_TRUE(fs::exists(path("report.20261207T000000Z-abcd.json")));
  EXPECT_TRUE(fs::exists(path("series.20261207T000000Z-abcd.sqlite")));
  EXPECT_TRUE(fs::exists(path("series.20261207T000000Z-abcd.sqlite-wal"))) << "the write-ahead log goes with it";
  EXPECT_EQ(ledger->identity.series_file, "series.20261207T000000Z-abcd.sqlite");
  EXPECT_TRUE(fs::exists(path(kScheduleLedgerFileName))) << "the ledger stays: the resumed run rewrites it";

  // A resumed run that stopped before its first step leaves the same ledger: its files are kept
  // under the same run id with a count, never over the first part's.
  write("report.json", "{}");
  write("series.sqlite", "more rows");
  open_resumed_run(dir_, path("profile.yaml"), path("topology.yaml"), nullptr);
  EXPECT_TRUE(fs::exists(path("series.20261207T000000Z-abcd-2.sqlite")));
  EXPECT_TRUE(fs::exists(path("report.20261207T000000Z-abcd-2.json")));
  std::ifstream first(path("series.20261207T000000Z-abcd.sqlite"));
  std::string kept;
  std::getline(first, kept);
  EXPECT_EQ(kept, "rows");
}

TEST_F(RunResume, AnotherProfileOrTopologyIsRefusedNamingTheFileAndNothingMoves) {
  write("other.yaml", "name: day\n");
  EXPECT_THAT(resume_error(path("other.yaml"), path("topology.yaml")),
              HasSubstr(path("other.yaml") + ": not the profile run 20261207T000000Z-abcd ran with"));
  EXPECT_THAT(resume_error(path("profile.yaml"), ""),
              HasSubstr("--topology: run 20261207T000000Z-abcd ran with a topology file: give the same one"));
  EXPECT_THAT(resume_error(path("profile.yaml"), path("other.yaml")),
              HasSubstr(path("other.yaml") + ": not the topology file run 20261207T000000Z-abcd ran with"));
  EXPECT_TRUE(fs::exists(path("report.json")));
  EXPECT_TRUE(fs::exists(path("series.sqlite")));
}

TEST_F(RunResume, AFinishedRunIsRefusedAndAnInterruptedOneIsTakenUpWithItsReportsKept) {
  write("junit.xml", "<testsuites/>");
  EXPECT_THAT(resume_error(path("profile.yaml"), path("topology.yaml")), HasSubstr("there is nothing to resume"));
  write("report.json", R"({"run_id": "20261207T000000Z-abcd", "interrupted": "2026-12-07T00:10:00Z", "tests": []})");
  write("report.html", "<html></html>");
  EXPECT_EQ(resume_error(path("profile.yaml"), path("topology.yaml")), "");
  EXPECT_TRUE(fs::exists(path("junit.20261207T000000Z-abcd.xml")));
  EXPECT_TRUE(fs::exists(path("report.20261207T000000Z-abcd.html")));
  EXPECT_FALSE(fs::exists(path("junit.xml")));
}

TEST_F(RunResume, ADirectoryWithoutALedgerOrWithADamagedOneSaysSo) {
  fs::remove(path(kScheduleLedgerFileName));
  EXPECT_THAT(resume_error(path("profile.yaml"), path("topology.yaml")),
              HasSubstr(path(kScheduleLedgerFileName) + ": no schedule ledger"));
  write(kScheduleLedgerFileName, "not a ledger at all");
  EXPECT_THAT(resume_error(path("profile.yaml"), path("topology.yaml")),
              HasSubstr(path(kScheduleLedgerFileName) + ": not a schedule ledger"));
  EXPECT_TRUE(fs::exists(path("series.sqlite")));
}

}  // namespace
}  // namespace tusk
