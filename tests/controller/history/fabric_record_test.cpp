// The fabric's record across runs (issue 62): each link's and host's state from the runs that
// exercised and blamed it, with the runs the state rests on; read from either store.
#include "controller/history/fabric_record.hpp"

#include <gtest/gtest.h>

#include "controller/history/run_history.hpp"
#include "tests/controller/history/history_test_reports.hpp"
#include "tests/support/throwaway_postgres.hpp"

namespace tusk::testing {
namespace {

// One run's rows for link `key`: blamed ("loss" at 1 %) or only crossed.
LinkTrendRow link_word(const std::string& run, std::int64_t started_s, const std::string& key, bool blamed,
                       const std::string& test = "mesh") {
  LinkTrendRow row;
  row.run.run_id = run;
  row.run.started_ns = started_s * 1'000'000'000;
  row.link.test = test;
  row.link.key = key;
  row.link.name = key + " (cable C" + key.substr(1) + ")";
  row.link.role = blamed ? "suspect" : "crossed";
  row.link.flows = 4;
  row.link.failing_flows = blamed ? 2 : 0;
  if (blamed) {
    row.link.kind = "loss";
    row.link.rate = 0.01;
    row.link.confidence = "high";
  }
  return row;
}

const FabricEntry& entry_of(const FabricRecord& record, const std::string& key) {
  for (const auto* entries : {&record.links, &record.hosts}) {
    for (const auto& entry : *entries) {
      if (entry.key == key) return entry;
    }
  }
  static const FabricEntry none;
  ADD_FAILURE() << "no entry " << key;
  return none;
}

// Six runs; each link's word in each (B blamed, c clean, - not exercised):
//   l1 B c c B c c   blamed again after a repair, then repaired again
//   l2 B c c - - -   repaired
//   l3 c c c c c B   suspect: the last run blamed it
//   l4 c c B c - c   blamed once, clean twice since: repaired
//   l5 c c c B c B   blamed in 2 of its last 5: repeat offender
//   l6 c c c c B c   blamed, one clean run since: still a suspect
//   l7 B c c c c c B  blamed again long after a repair (1 of its last 5), not repaired since: repeat offender
//   l8 c c c c c c   clean
TEST(FabricRecord, EachLinksStateFollowsItsBlamesAndCleanRunsAndNamesTheRunsItRestsOn) {
  const std::map<std::string, std::string> words{{"l1", "Bcc Bcc"}, {"l2", "Bcc---"}, {"l3", "cccccB"},
                                                 {"l4", "ccBc-c"},  {"l5", "cccBcB"}, {"l6", "ccccBc"},
                                                 {"l7", "BcccccB"}, {"l8", "cccccc"}};
  std::vector<LinkTrendRow> rows;
  for (int run = 0; run < 7; ++run) {
    for (const auto& [key, pattern] : words) {
      const std::string compact = [&] {
        std::string out;
        for (const char c : pattern) {
          if (c != ' ') out += c;
        }
        return out;
      }();
      if (run >= static_cast<int>(compact.size()) || compact[run] == '-') continue;
      rows.push_back(link_word("run-" + std::to_string(run + 1), run * 3600, key, compact[run] == 'B'));
    }
  }
  const FabricRecord record = fabric_record(rows, {});
  EXPECT_EQ(record.runs.size(), 7u);
  EXPECT_EQ(entry_of(record, "l1").state, "repaired");
  EXPECT_EQ(entry_of(record, "l2").state, "repaired");
  EXPECT_EQ(entry_of(record, "l2").why, "blamed in run-1, clean in the 2 runs since");
  EXPECT_EQ(entry_of(record, "l2").rests_on, (std::vector<std::string>{"run-1", "run-2", "run-3"}));
  EXPECT_EQ(entry_of(record, "l3").state, "suspect");
  EXPECT_EQ(entry_of(record, "l3").why, "blamed by the last run that exercised it, run-6");
  EXPECT_EQ(entry_of(record, "l4").state, "repaired");
  EXPECT_EQ(entry_of(record, "l4").runs.size(), 5u) << "run-5 did not exercise it";
  EXPECT_EQ(entry_of(record, "l5").state, "repeat offender");
  EXPECT_EQ(entry_of(record, "l5").why, "blamed in 2 of its last 5 runs");
  EXPECT_EQ(entry_of(record, "l5").rests_on, (std::vector<std::string>{"run-4", "run-6"}));
  EXPECT_EQ(entry_of(record, "l6").state, "suspect");
  EXPECT_EQ(entry_of(record, "l6").why, "blamed in run-5, clean in 1 run since (2 needed)");
  EXPECT_EQ(entry_of(record, "l7").state, "repeat offender");
  EXPECT_EQ(entry_of(record, "l7").why, "its fault came back in run-7 after it had been clean");
  EXPECT_EQ(entry_of(record, "l8").state, "clean");
  EXPECT_EQ(entry_of(record, "l8").blames, 0);
  // The worst first.
  EXPECT_EQ(record.links.front().state, "repeat offender");
  EXPECT_EQ(record.links.back().state, "clean");
  // A blame's words: its kind, rate and confidence.
  const FabricRun& blame = entry_of(record, "l3").runs.back();
  EXPECT_TRUE(blame.blamed);
  EXPECT_EQ(blame.kind, "loss");
  EXPECT_DOUBLE_EQ(blame.rate.value_or(-1), 0.01);
  EXPECT_EQ(blame.confidence, "high");

  // Stricter settings change the states, not the facts.
  FabricSettings strict;
  strict.clean_to_repair = 3;
  EXPECT_EQ(entry_of(fabric_record(rows, {}, strict), "l2").state, "suspect");
  strict.repeat_blames = 3;
  EXPECT_EQ(entry_of(fabric_record(rows, {}, strict), "l5").state, "suspect");
}

// A link crossed by one test of a run and blamed by another is that run's one word: blamed.
TEST(FabricRecord, ALinkInSeveralTestsOfARunIsOneRunBlamedWhereAnyTestBlamedIt) {
  const FabricRecord record =
      fabric_record({link_word("run-1", 0, "l1", false, "pairs"), link_word("run-1", 0, "l1", true, "mesh")}, {});
  const FabricEntry& link = entry_of(record, "l1");
  ASSERT_EQ(link.runs.size(), 1u);
  EXPECT_TRUE(link.runs[0].blamed);
  EXPECT_EQ(link.runs[0].of, 8);
  EXPECT_EQ(link.state, "suspect");
}

class FabricStores : public ::testing::TestWithParam<std::string> {
 protected:
  std::string where() {
    if (GetParam() == "sqlite") return scratch_.path("history.sqlite");
    return ThrowawayPostgres::shared().fresh_database(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  HistoryScratch scratch_;
};

INSTANTIATE_TEST_SUITE_P(Stores, FabricStores, ::testing::Values("sqlite", "postgresql"),
                         [](const ::testing::TestParamInfo<std::string>& store) { return store.param; });

// From recorded reports: the sample's suspect link blamed in two runs is a repeat offender, the
// link it crossed beside it clean, its hosts' streams counted; --since leaves the older run out.
TEST_P(FabricStores, RecordedRunsGiveEachLinkAndHostItsRecordAndSinceLeavesOlderRunsOut) {
  RunHistory history(where());
  history.record_run(sample_report("run-1", "2026-11-24T08:00:00.000Z"), "/r/1");
  history.record_run(sample_report("run-2", "2026-11-25T08:00:00.000Z"), "/r/2");
  const FabricRecord record = fabric_record(history.links_since(0), history.hosts_since(0));
  EXPECT_EQ(record.runs, (std::vector<std::string>{"run-1", "run-2"}));
  const FabricEntry& suspect = entry_of(record, "s1:l2 -> l2:s1");
  EXPECT_EQ(suspect.name, "spine-1 eth2 -> leaf-2 eth1 (cable C7)");
  EXPECT_EQ(suspect.state, "repeat offender");
  EXPECT_EQ(suspect.runs.back().kind, "loss");
  EXPECT_EQ(entry_of(record, "l1:s1 -> s1:l1").state, "clean");
  const FabricEntry& host = entry_of(record, "lab-a");
  ASSERT_EQ(host.runs.size(), 2u);
  EXPECT_GT(host.runs[0].of, 0);

  // Since the second run's start: only it.
  const std::int64_t second = *history.find_run("run-2")->started_ns;
  const FabricRecord recent = fabric_record(history.links_since(second), history.hosts_since(second));
  EXPECT_EQ(recent.runs, (std::vector<std::string>{"run-2"}));
  EXPECT_EQ(entry_of(recent, "s1:l2 -> l2:s1").state, "suspect");
}

}  // namespace
}  // namespace tusk::testing
