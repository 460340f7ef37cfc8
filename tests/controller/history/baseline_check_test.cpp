// A run against its profile's baseline from the history: "last" is the newest earlier run of the
// same profile, a run id that one; what got worse is listed, and a baseline that cannot be found
// is said, never thrown.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/history/baseline_check.hpp"
#include "controller/history/run_history.hpp"
#include "tests/controller/history/history_test_reports.hpp"

namespace tusk {
namespace {

using json = nlohmann::ordered_json;
using ::testing::HasSubstr;

// `report` with its first measured throughput cut to `share` of what it was.
json with_slower_stream(json report, double share) {
  for (auto& stream : report["tests"][0]["streams"]) {
    auto& metrics = stream["metrics"];
    if (!metrics.contains("throughput_bps")) continue;
    metrics["throughput_bps"] = metrics["throughput_bps"].get<double>() * share;
    break;
  }
  return report;
}

TEST(BaselineCheck, LastIsTheNewestEarlierRunOfTheProfileAndASlowerStreamIsARegression) {
  testing::HistoryScratch scratch;
  const std::string path = scratch.path("history.sqlite");
  {
    RunHistory history(path);
    history.record_run(testing::sample_report("run-old", "2026-11-20T10:00:00.000Z"), "/runs/old");
    history.record_run(testing::sample_report("run-a", "2026-11-24T10:00:00.000Z"), "/runs/a");
    history.record_run(testing::sample_report("run-other", "2026-11-25T10:00:00.000Z", "another-profile"), "/runs/o");
  }
  const json now = with_slower_stream(testing::sample_report("run-now", "2026-11-26T10:00:00.000Z"), 0.8);
  const BaselineCheck check = check_against_baseline("last", now, path);
  EXPECT_EQ(check.json["run_id"], "run-a") << check.json.dump(1);
  EXPECT_GT(check.json["compared_streams"].get<std::size_t>(), 0u);
  ASSERT_EQ(check.json["regressions"].size(), 1u) << check.json.dump(1);
  EXPECT_EQ(check.json["regressions"][0]["metric"], "throughput_bps");
  ASSERT_EQ(check.warnings.size(), 1u);
  EXPECT_THAT(check.warnings[0], HasSubstr("worse than baseline run-a: "));

  const BaselineCheck same = check_against_baseline("run-old", testing::sample_report("run-now"), path);
  EXPECT_EQ(same.json["run_id"], "run-old");
  EXPECT_TRUE(same.json["regressions"].empty()) << same.json.dump(1);
  EXPECT_TRUE(same.warnings.empty());
}

TEST(BaselineCheck, ABaselineThatCannotBeFoundIsSaidNotThrown) {
  testing::HistoryScratch scratch;
  const std::string path = scratch.path("history.sqlite");
  const json now = testing::sample_report("run-now");
  EXPECT_THAT(check_against_baseline("last", now, path).warnings.at(0), HasSubstr("no history at"));
  {
    RunHistory history(path);
    history.record_run(now, "/runs/now");  // only this run itself
  }
  const BaselineCheck alone = check_against_baseline("last", now, path);
  EXPECT_THAT(alone.warnings.at(0), HasSubstr("no earlier run of profile 'lab-dpdk-ber'"));
  EXPECT_TRUE(alone.json["run_id"].is_null());
  EXPECT_THAT(check_against_baseline("run-gone", now, path).warnings.at(0), HasSubstr("no run run-gone in"));
}

}  // namespace
}  // namespace tusk
