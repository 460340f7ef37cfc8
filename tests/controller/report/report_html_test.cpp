// report.html and the page model it draws: one self-contained file that takes nothing from the
// network, carries a hostile agent name as data and never as markup, and lays the report's own
// numbers out per host pair. How the page draws is checked in headless Chromium by the lab tests.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "tests/support/named_sample.hpp"

#include <regex>
#include <string>

#include "controller/report/report_page_model.hpp"
#include "controller/report/reports.hpp"

namespace tusk {
namespace {

using json = nlohmann::ordered_json;

json stream(const std::string& agent, const std::string& id, const std::string& kind, const std::string& peer,
            bool receives, bool passed) {
  json s{{"agent", agent}, {"stream_id", id}, {"peer", peer}, {"kind", kind}, {"passed", passed}};
  if (!peer.empty()) {
    s["sender"] = receives ? peer : agent;
    s["receiver"] = receives ? agent : peer;
  }
  s["counters"] = {{"rx_frames", 1000}, {"lost_frames", passed ? 0 : 7}};
  s["gauges"] = json::object();
  s["metrics"] = {{"throughput_bps", 123456789.987}, {"loss_ratio", passed ? 0.0 : 0.007}};
  s["ber"] = receives ? json{{"bits_compared", 8e9},
                             {"bit_errors", 0},
                             {"measured", 0.0},
                             {"upper_bound", 3.7e-10},
                             {"confidence", 0.95},
                             {"target", 1e-12},
                             {"bits_needed_for_target", 3e12},
                             {"seconds_more_for_target", 1200.0}}
                      : json(nullptr);
  s["checks"] = json::array();
  if (!passed)
    s["checks"].push_back({{"key", "max_lost_frames"}, {"passed", false}, {"text", "lost_frames 7 > max 0"}});
  s["series"] =
      json::array({{{"index", 1}, {"elapsed_ms", 1000}, {"counters", {{"lost_frames", 0}}}, {"throughput_bps", 1.2e8}},
                   {{"index", 2},
                    {"elapsed_ms", 2000},
                    {"counters", {{"lost_frames", passed ? 0 : 7}, {"traffic_gaps", passed ? 0 : 1}}},
                    {"throughput_bps", 1.1e8}}});
  return s;
}

json two_host_report(const std::string& name_b) {
  json test{{"index", 0},
            {"name", "cable"},
            {"engine", "dpdk"},
            {"topology", "pairs"},
            {"duration_s", 2.0},
            {"verdict", "fail"},
            {"problems", json::array()},
            {"warnings", json::array()},
            {"planned_start", "2026-11-24T10:00:00.000Z"},
            {"start_skew_ns", 12000},
            {"starts", json::array()},
            {"agents", json::array({{{"agent", "lab-a"},
                                     {"events", json::array({{{"time", "2026-11-24T10:00:01.500Z"},
                                                              {"kind", "LINK_DOWN"},
                                                              {"message", "port down"}}})}}})}};
  test["streams"] = json::array({stream("lab-a", "tx:" + name_b, "tx", name_b, false, true),
                                 stream(name_b, "rx:lab-a/1", "rx", "lab-a", true, false),
                                 stream("lab-a", "rx:" + name_b + "/1", "rx", name_b, true, true),
                                 stream("lab-a", "port:net0", "port", "", false, true)});
  return {{"schema", "tusk.report/1"},
          {"tusk_version", "0.1.0"},
          {"run_id", "run-1"},
          {"profile", {{"name", "p"}, {"file", "p.yaml"}, {"description", ""}, {"source", "name: p\n"}}},
          {"exit_code", 1},
          {"conclusion", "1 of 1 tests failed"},
          {"agents", json::array()},
          {"tests", json::array({test})},
          {"faults", json::array({{{"time", "2026-11-24T10:00:02.000Z"},
                                   {"agent", "lab-a"},
                                   {"test_index", 0},
                                   {"message", "agent lost"}}})}};
}

TEST(ReportPageModel, LaysTheStreamsOutAsColumnsWithTheirHostPairs) {
  const json model = report_page_model(two_host_report("lab-b"));
  const json& test = model["tests"][0];
  EXPECT_EQ(test["hosts"], json::array({"lab-a", "lab-b"}));
  const json& s = test["streams"];
  ASSERT_EQ(s["id"].size(), 4u);
  // lab-b's receiver counts what lab-a sent: the pair lab-a -> lab-b.
  EXPECT_EQ(s["sender"][1], 0);
  EXPECT_EQ(s["receiver"][1], 1);
  EXPECT_EQ(s["passed"][1], 0);
  EXPECT_EQ(s["failed_checks"][1], json::array({"lost_frames 7 > max 0"}));
  EXPECT_EQ(s["sender"][3], -1) << "a port stream belongs to no pair";
  EXPECT_EQ(s["throughput_bps"][0], 123456790) << "whole bits per second";
  EXPECT_EQ(s["loss_ratio"][1], 0.007);
  EXPECT_EQ(s["series"][1]["lost"], json::array({0.0, 7.0}));
  ASSERT_EQ(test["ber"].size(), 2u);
  EXPECT_EQ(test["ber"][0]["stream"], 1);
  EXPECT_EQ(test["ber"][0]["upper_bound"], 3.7e-10);
}

// Before: a stream that had failed with 5,825 bit errors was offered "more time to show the
// target: 298.6 days", a time worked out as if no more errors would come.
TEST(ReportPageModel, AStreamWithBitErrorsIsShownWhatTheErrorsProveNeverMoreTime) {
  json report = two_host_report("lab-b");
  json& ber = report["tests"][0]["streams"][1]["ber"];
  ber["bit_errors"] = 5825;
  ber["measured"] = 5825 / 8e9;
  ber["lower_bound"] = 7.1e-7;
  ber["upper_bound"] = 7.4e-7;
  ber["seconds_more_for_target"] = 25'800'000.0;  // as an older report had it
  const json model = report_page_model(report);
  const json& rows = model["tests"][0]["ber"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["seconds_more_for_target"], nullptr);
  EXPECT_EQ(rows[0]["errors_show"], "errors show BER ≥ 7.10e-07 (95.0 %): above the target");
  // Its error-free sibling still gets its time, and nothing about errors.
  EXPECT_EQ(rows[1]["seconds_more_for_target"], 1200.0);
  EXPECT_EQ(rows[1]["errors_show"], nullptr);
}

TEST(ReportPageModel, PutsEventsFaultsAndTrafficGapsOnTheTestsTimeAxis) {
  const json events = report_page_model(two_host_report("lab-b"))["tests"][0]["events"];
  std::map<std::string, double> at;
  for (const auto& event : events) at[event["kind"].get<std::string>()] = event["t"].get<double>();
  EXPECT_DOUBLE_EQ(at.at("LINK_DOWN"), 1.5);
  EXPECT_DOUBLE_EQ(at.at("FAULT"), 2.0);
  EXPECT_DOUBLE_EQ(at.at("TRAFFIC_GAP"), 2.0);
}

TEST(ReportPageModel, ALongRunsSeriesIsDrawnInBinsThatKeepCountsAndTheSlowestStep) {
  json report = two_host_report("lab-b");
  json& series = report["tests"][0]["streams"][1]["series"];
  series = json::array();
  for (int s = 1; s <= 1000; ++s) {  // 1,000 samples: bins of 5, 200 points
    series.push_back({{"index", s},
                      {"elapsed_ms", s * 1000},
                      {"counters", {{"lost_frames", s == 7 ? 3 : 0}}},
                      {"throughput_bps", s <= 5 ? 100.0 * s : 1000.0},
                      {"step_time_ns", s == 9 ? 50e6 : 1e6}});
  }
  const json test = report_page_model(report)["tests"][0];
  EXPECT_EQ(test["samples_per_bin"], 5);
  const json& binned = test["streams"]["series"][1];
  ASSERT_EQ(binned["throughput_bps"].size(), 200u);
  EXPECT_FALSE(binned.contains("t")) << "on the test's shared axis";
  EXPECT_EQ(test["streams"]["t"][0], 5.0) << "a bin is placed at its last sample's end";
  EXPECT_EQ(binned["throughput_bps"][0], 300) << "the mean of 100..500";
  EXPECT_EQ(binned["lost"][1], 3.0) << "counts are summed, not averaged away";
  EXPECT_EQ(binned["step_time_ns"][1], 50000000) << "the slowest step is kept";
  EXPECT_EQ(test["streams"]["series"][0]["throughput_bps"].size(), 2u) << "a short stream is not binned";
}

// A report of this build (schema /2) carries each stream's bins, not its samples: an hour of 100 ms
// samples is 113 bins of 32, and the page draws them with their counts and their slowest step whole.
TEST(ReportPageModel, AReportsOwnBinsAreDrawnWithCountsAndTheSlowestStepWhole) {
  RunOutcome outcome;
  outcome.run_id = "r";
  outcome.profile.name = "p";
  TestOutcome test;
  test.agents = {"a"};
  auto& data = test.per_agent["a"];
  constexpr std::uint32_t kSamples = 36'000;
  std::uint64_t lost = 0;
  for (std::uint32_t s = 1; s <= kSamples; ++s) {
    data.samples.insert(s);
    proto::StreamCounters stream;
    stream.set_stream_id("rx:b/1");
    lost += s == 20'000 ? 9 : 0;
    (*stream.mutable_counters())["rx_bytes"] = 12'500ull * s;
    (*stream.mutable_counters())["lost_frames"] = lost;
    (*stream.mutable_counters())["steps_done"] = s;
    (*stream.mutable_gauges())["step_time_mean_ns"] = 1e6 + (s >= 30'000 ? 49e6 / s : 0);
    testing::add_named(data.series["rx:b/1"], s, 100ull * s, std::move(stream));
  }
  StreamVerdict verdict;
  verdict.agent = "a";
  verdict.stream.set_stream_id("rx:b/1");
  verdict.stream.set_kind("rx");
  test.streams.push_back(verdict);
  outcome.tests.push_back(std::move(test));
  const json report = report_json(outcome);
  EXPECT_EQ(report["schema"], "tusk.report/2");
  const json& bins = report["tests"][0]["streams"][0]["bins"];
  // The least power of two that fits 36,000 samples in kMaxSeriesBins bins.
  std::uint32_t width = 1;
  while ((kSamples + width - 1) / width > kMaxSeriesBins) width *= 2;
  const std::size_t drawn = (kSamples + width - 1) / width;
  EXPECT_EQ(report["tests"][0]["samples_per_bin"], width);
  ASSERT_EQ(bins["index"].size(), drawn);
  EXPECT_LT(bins.dump().size(), 8'000u) << "an hour's series is a few kilobytes";
  const json page = report_page_model(report)["tests"][0];
  EXPECT_EQ(page["samples_per_bin"], width);
  const json& series = page["streams"]["series"][0];
  ASSERT_EQ(series["throughput_bps"].size(), drawn);
  EXPECT_EQ(series["throughput_bps"][0], 1'000'000);
  double lost_drawn = 0;
  for (const auto& value : series["lost"]) lost_drawn += value.get<double>();
  EXPECT_EQ(lost_drawn, 9);
  EXPECT_EQ(series["lost"][(20'000 - 1) / width], 9);
  double slowest = 0;
  for (const auto& value : series["step_time_ns"]) slowest = std::max(slowest, value.get<double>());
  EXPECT_NEAR(slowest, 50e6, 1e3) << "step 30,000 took 50 ms";
}

// Before: a run that never started (no agent came) wore the same FAIL badge as a bad cable.
TEST(ReportPageModel, TheRunsBadgeSaysPassOrFailOnlyForARunThatReachedAVerdict) {
  json report = two_host_report("lab-b");
  EXPECT_EQ(report_page_model(report)["run"]["status"], "fail");
  report["exit_code"] = 0;
  EXPECT_EQ(report_page_model(report)["run"]["status"], "pass");
  report["exit_code"] = 3;
  EXPECT_EQ(report_page_model(report)["run"]["status"], "incomplete");
  report["interrupted"] = "2026-11-24T10:00:01.000Z";
  report["exit_code"] = 130;
  EXPECT_EQ(report_page_model(report)["run"]["status"], "interrupted");
  report.erase("interrupted");
  report["tests"] = json::array();
  report["exit_code"] = 3;
  EXPECT_EQ(report_page_model(report)["run"]["status"], "not run");
}

TEST(ReportPageModel, RefusesWhatIsNotATuskReportAndToleratesAnOlderOne) {
  EXPECT_THROW(report_page_model(json{{"hello", 1}}), std::runtime_error);
  EXPECT_THROW(report_page_model(json::array()), std::runtime_error);
  // A report written before streams said which way they went: no pairs, no error.
  json older = two_host_report("lab-b");
  for (auto& s : older["tests"][0]["streams"]) {
    s.erase("sender");
    s.erase("receiver");
    s.erase("series");
  }
  older["tests"][0].erase("planned_start");
  const json model = report_page_model(older);
  EXPECT_EQ(model["tests"][0]["streams"]["sender"][1], -1);
  EXPECT_TRUE(model["tests"][0]["events"][0]["t"].is_null());
}

TEST(ReportHtml, IsOneFileThatLoadsNothingAndSaysSoInItsPolicy) {
  const std::string page = report_html(two_host_report("lab-b"));
  EXPECT_EQ(page.find("@TUSK_"), std::string::npos) << "a template marker was left unfilled";
  EXPECT_NE(page.find("Content-Security-Policy"), std::string::npos);
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(page.find("var uPlot="), std::string::npos) << "the charting library is embedded";
  // No element fetches anything: no src= or href= pointing anywhere, no stylesheet link.
  EXPECT_FALSE(std::regex_search(page, std::regex(R"((src|href)\s*=\s*["'](https?:|//))")))
      << "a request would leave the page";
  EXPECT_EQ(page.find("<link"), std::string::npos);
}

TEST(ReportHtml, AHostileAgentNameIsDataNeverMarkup) {
  const std::string hostile = "</script><script>alert(1)</script>@TUSK_PAGE_SCRIPT@";
  const std::string page = report_html(two_host_report(hostile));
  EXPECT_EQ(page.find("<script>alert(1)"), std::string::npos);
  EXPECT_NE(page.find("\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"), std::string::npos);
  // The marker-like text stayed in the data, and the page's script still went where it belongs.
  EXPECT_NE(page.find("function render()"), std::string::npos);
  const std::string open = "<script id=\"report-data\" type=\"application/json\">";
  const auto data_start = page.find(open);
  ASSERT_NE(data_start, std::string::npos);
  const auto data_end = page.find("</script>", data_start);
  const json model = json::parse(page.substr(data_start + open.size(), data_end - data_start - open.size()));
  EXPECT_EQ(model["tests"][0]["hosts"][1], hostile);
}

}  // namespace
}  // namespace tusk
