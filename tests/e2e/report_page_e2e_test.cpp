// report.html's parts that this machine's labs reach only in the Soft-RoCE VMs (a training
// replay's step timeline) or rarely (a lost agent, a host problem, hostile names), drawn by
// `tusk-controller report` from a report.json made here and opened in headless Chromium.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/e2e/process.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/headless_chromium.hpp"

namespace tusk::testing {
namespace {

using json = nlohmann::ordered_json;
using namespace std::chrono_literals;

const std::string kHostile = "rank-3</script><script>document.title='owned'</script>";

json flow_stream(const std::string& agent, const std::string& peer, int qp, double step_ms) {
  json series = json::array();
  for (int s = 1; s <= 5; ++s) {
    series.push_back({{"index", s},
                      {"elapsed_ms", s * 1000},
                      {"counters", {{"tx_bytes", 1'000'000}, {"steps_done", 10}, {"retransmits", s == 3 ? 4 : 0}}},
                      {"throughput_bps", s == 3 ? 7.8e6 : 8e6},  // a 2.5 % dip
                      {"step_time_ns", step_ms * 1e6 * (s == 4 ? 2.5 : 1.0)}});
  }
  return {{"agent", agent},
          {"stream_id", "flow:" + peer + "/qp" + std::to_string(qp)},
          {"peer", peer},
          {"kind", "flow"},
          {"sender", agent},
          {"receiver", peer},
          {"passed", true},
          {"counters", {{"tx_bytes", 5'000'000}}},
          {"gauges", {{"step_time_mean_ns", step_ms * 1e6}}},
          {"metrics", {{"throughput_bps", 8e6}}},
          {"ber", nullptr},
          {"checks", json::array()},
          {"series", series}};
}

json everything_report() {
  const std::vector<std::string> ranks{"rank-0", "rank-1", "rank-2", kHostile};
  json streams = json::array();
  for (std::size_t a = 0; a < ranks.size(); ++a) {
    for (std::size_t b = 0; b < ranks.size(); ++b) {
      if (a != b) streams.push_back(flow_stream(ranks[a], ranks[b], static_cast<int>(b), a == 2 ? 9.0 : 3.0));
    }
  }
  streams[4]["passed"] = false;
  streams[4]["checks"] =
      json::array({{{"key", "max_completion_errors"}, {"passed", false}, {"text", "completion_errors 2 > max 0"}}});
  json per_rank = json::array();
  for (const auto& rank : ranks) {
    per_rank.push_back({{"agent", rank},
                        {"bytes_per_step", 1e6},
                        {"model_bytes_per_step", 1e6},
                        {"steps_done", 50},
                        {"step_time_mean_s", rank == "rank-2" ? 0.009 : 0.003},
                        {"step_time_max_s", 0.02}});
  }
  json test{{"index", 0},
            {"name", "all-reduce"},
            {"engine", "rdma"},
            {"topology", "mesh"},
            {"duration_s", 5},
            {"sample_interval_s", 1},
            {"verdict", "fail"},
            {"problems", json::array({"agent " + kHostile + " lost"})},
            {"warnings", json::array({"a warning"})},
            {"planned_start", "2026-11-24T10:00:00.000Z"},
            {"start_skew_ns", 2000},
            {"thresholds", json::array()},
            {"streams", streams},
            {"path_faults", json::array()}};
  test["collective"] = {{"name", "all_reduce"},     {"ranks", 4},
                        {"bytes_per_step", 4e6},    {"steps", 50},
                        {"time_per_step_s", 0.009}, {"slowest_rank", "rank-2"},
                        {"algbw_bytes_per_s", 4e8}, {"busbw_bytes_per_s", 6e8},
                        {"per_rank", per_rank},     {"links", json::array()}};
  test["localisation"] = {{"conclusion", "suspect link l1:s1 -> s1:l1"},
                          {"suspects", json::array({{{"link", "l1:s1 -> s1:l1"},
                                                     {"name", "l1:s1 -> s1:l1, cable C-1"},
                                                     {"confidence", "medium"},
                                                     {"votes", 2.5},
                                                     {"kind", "loss"},
                                                     {"rate", 0.0201},
                                                     {"rate_interval", json::array({0.0192, 0.0211})},
                                                     {"faults", json::array({"retransmits"})},
                                                     {"failing_flows", json::array({"flow:rank-1/qp1"})},
                                                     {"passing_flows", json::array()},
                                                     {"evidence", "2 of 2 flows through it retransmit"},
                                                     {"next_steps", json::array({"Reseat cable C-1."})}}})},
                          {"hosts", json::array({{{"agent", "rank-3"},
                                                  {"problem", "receiver cannot keep up"},
                                                  {"evidence", "host drops"},
                                                  {"next_steps", "Check the CPU."}}})},
                          {"flows", json::array({{{"sender", "rank-0"},
                                                  {"receiver", "rank-1"},
                                                  {"stream", "flow:rank-1/qp1"},
                                                  {"flow", "10.0.0.1:49152 > 10.0.0.2:4791 udp"},
                                                  {"passed", false},
                                                  {"faults", json::array({"retransmits"})},
                                                  {"nodes", json::array({"rank-0", "l1", "s1", "rank-1"})},
                                                  {"links", json::array({"l1:s1 -> s1:l1"})},
                                                  {"path", json::array()}}})}};
  json starts = json::array(), agents = json::array(), results = json::array();
  for (const auto& rank : ranks) {
    starts.push_back(
        {{"agent", rank}, {"clock_offset_ns", 1200}, {"clock_rtt_ns", 90000}, {"start_error_ns", nullptr}});
    results.push_back({{"agent", rank},
                       {"lost", rank == kHostile},
                       {"samples_received", 5},
                       {"samples_made", 5},
                       {"completed", true},
                       {"stop_reason", "duration"},
                       {"events", json::array({{{"time", "2026-11-24T10:00:02.250Z"},
                                                {"kind", "LINK_DOWN"},
                                                {"stream_id", ""},
                                                {"message", "mlx5_0 port 1 down"}}})}});
    agents.push_back({{"name", rank},
                      {"hostname", rank},
                      {"version", "0.1.0"},
                      {"remote", "10.0.0.9:1"},
                      {"connected_at_end", rank != kHostile},
                      {"connections", 1},
                      {"duplicate_records_dropped", 0},
                      {"records_missing", 0},
                      {"notes", json::array()}});
  }
  test["starts"] = starts;
  test["agents"] = results;
  return {
      {"schema", "tusk.report/1"},
      {"tusk_version", "0.1.0"},
      {"run_id", "e2e-everything"},
      {"profile", {{"name", "replay"}, {"file", "replay.yaml"}, {"description", "d"}, {"source", "name: replay\n"}}},
      {"started", "2026-11-24T10:00:00.000Z"},
      {"finished", "2026-11-24T10:00:06.000Z"},
      {"exit_code", 1},
      {"conclusion", "1 of 1 tests failed"},
      {"missing_agents", json::array()},
      {"agents", agents},
      {"tests", json::array({test})},
      {"faults", json::array({{{"time", "2026-11-24T10:00:03.000Z"},
                               {"agent", kHostile},
                               {"test_index", 0},
                               {"message", "connection lost"}}})},
      {"baseline",
       {{"baseline", "last"},
        {"run_id", "e2e-before"},
        {"compared_streams", 12},
        {"regression_count", 1},
        {"regressions", json::array({{{"subject", "cable rank-1 rx:rank-0/1 (rank-0->rank-1)"},
                                      {"metric", "throughput_bps"},
                                      {"before", 8e9},
                                      {"after", 6e9},
                                      {"text", "throughput 8.00 Gbit/s -> 6.00 Gbit/s (-25 %)"}}})}}}};
}

TEST(ReportPageE2E, EveryPartOfAReplayRunDrawsWithoutAnErrorAndHostileNamesStayText) {
  if (!HeadlessChromium::available()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  const auto dir = std::filesystem::temp_directory_path() / ("tusk-report-page-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "run");
  std::ofstream(dir / "run" / "report.json") << everything_report().dump(1);
  ASSERT_EQ(
      Process({tusk::build_paths::controller_bin(), "report", (dir / "run").string()}, (dir / "report.log").string())
          .wait(30s)
          .value_or(-100),
      0);

  const RenderedPage page = HeadlessChromium::render((dir / "run" / "report.html").string(), dir.string());
  ASSERT_EQ(page.status, 0) << page.log;
  EXPECT_EQ(page.attribute("rendered"), "yes");
  EXPECT_EQ(page.attribute("errors"), std::nullopt) << page.attribute("errors").value_or("");
  EXPECT_TRUE(page.console_errors().empty()) << page.log;
  EXPECT_EQ(page.attribute("matrix-hosts"), "4");
  EXPECT_EQ(page.attribute("matrix-cells"), "12");
  EXPECT_EQ(page.attribute("failing-pairs"), "1");
  // Rates and counts are drawn from zero (a zoomed axis made a 2.5 % dip look like a collapse):
  // where uPlot put each chart's y axis, read back from the page.
  const auto minimums = json::parse(page.attribute("chart-axis-minimums").value_or("[]"));
  EXPECT_GE(minimums.size(), 2u) << "throughput and retransmits are charted";
  for (const auto& minimum : minimums) EXPECT_EQ(minimum, 0) << "a chart's y axis starts at " << minimum.dump();
  // The straggler's row is marked, the step timeline and the suspect link are drawn, and the
  // hostile name is text: the title the injected script would set is not set.
  EXPECT_NE(page.dom.find("<tr class=\"straggler\"><td>rank-2</td>"), std::string::npos);
  EXPECT_NE(page.dom.find("Time per step, per rank"), std::string::npos);
  EXPECT_NE(page.dom.find("l1:s1 -&gt; s1:l1, cable C-1"), std::string::npos);
  EXPECT_NE(page.dom.find("loss 2.01 % (1.92 % to 2.11 %)"), std::string::npos)
      << "the suspect's rate, with its interval";
  EXPECT_NE(page.dom.find("rank-3&lt;/script&gt;&lt;script&gt;"), std::string::npos);
  EXPECT_EQ(page.dom.find("<title>owned</title>"), std::string::npos);
  EXPECT_NE(page.dom.find("<title>Tusk e2e-everything</title>"), std::string::npos);
  // Against its baseline run: the headline and what got worse.
  EXPECT_NE(page.dom.find("against baseline e2e-before: 1 regression over 12 streams compared"), std::string::npos);
  EXPECT_NE(page.dom.find("cable rank-1 rx:rank-0/1 (rank-0-&gt;rank-1): throughput 8.00 Gbit/s"), std::string::npos);
  if (!HasFailure()) std::filesystem::remove_all(dir);
}

TEST(ReportPageE2E, ARunDirectoryWithoutAReportIsAUsageErrorThatNamesTheFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("tusk-report-none-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string log = (dir / "report.log").string();
  EXPECT_EQ(Process({tusk::build_paths::controller_bin(), "report", dir.string()}, log).wait(30s).value_or(-100), 2);
  std::ifstream file(log);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find((dir / "report.json").string()), std::string::npos) << text;
  std::ofstream(dir / "report.json") << R"({"schema": "something/else"})";
  EXPECT_EQ(Process({tusk::build_paths::controller_bin(), "report", dir.string()}, log).wait(30s).value_or(-100), 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tusk::testing
