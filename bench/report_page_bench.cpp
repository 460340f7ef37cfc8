// How long report.html takes to open for a large fabric: a synthetic full mesh of N hosts
// (N x (N-1) host pairs, a sender and a receiver stream each, per-second series, a few failing
// pairs), written by the controller's own report_html() and opened in headless Chromium. The page
// measures itself (navigation start to everything drawn: parse, data, matrix, charts, tables) and
// the reference is the same page for a 2-host run, opened in the same run of this program.
// Prints the median of several openings; the target is under 3 s for 256 hosts.
//
//   report_page_bench [--hosts 256] [--seconds 10] [--runs 3]
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include "controller/report/reports.hpp"
#include "tests/support/headless_chromium.hpp"

namespace {

using json = nlohmann::ordered_json;

json series(int seconds, const char* bytes_key, double rate_bps, int lost_per_second) {
  json points = json::array();
  for (int s = 1; s <= seconds; ++s) {
    json counters{{bytes_key, static_cast<std::int64_t>(rate_bps / 8)}};
    if (lost_per_second > 0) counters["lost_frames"] = lost_per_second;
    points.push_back({{"index", s}, {"elapsed_ms", s * 1000}, {"counters", counters}, {"throughput_bps", rate_bps}});
  }
  return points;
}

// One mesh test of `hosts` hosts; every 997th pair loses frames and fails.
json synthetic_report(int hosts, int seconds) {
  std::vector<std::string> names;
  for (int i = 0; i < hosts; ++i) names.push_back(fmt::format("rack{:02d}-host{:03d}", i / 32, i));
  json streams = json::array();
  for (int a = 0; a < hosts; ++a) {
    for (int b = 0; b < hosts; ++b) {
      if (a == b) continue;
      const bool bad = (a * 7 + b) % 997 == 0;
      const double rate = 2.4e8 * (bad ? 0.9 : 1.0 - 0.03 * ((a * 31 + b * 17) % 100) / 100.0);
      streams.push_back({{"agent", names[a]},
                         {"stream_id", "tx:" + names[b]},
                         {"peer", names[b]},
                         {"kind", "tx"},
                         {"sender", names[a]},
                         {"receiver", names[b]},
                         {"passed", true},
                         {"counters", {{"tx_frames", 20000 * seconds}}},
                         {"gauges", json::object()},
                         {"metrics", {{"throughput_bps", 2.4e8}}},
                         {"ber", nullptr},
                         {"checks", json::array()},
                         {"series", series(seconds, "tx_bytes", 2.4e8, 0)}});
      json checks = json::array();
      if (bad) checks.push_back({{"key", "max_lost_frames"}, {"passed", false}, {"text", "lost_frames 30 > max 0"}});
      streams.push_back({{"agent", names[b]},
                         {"stream_id", "rx:" + names[a] + "/1"},
                         {"peer", names[a]},
                         {"kind", "rx"},
                         {"sender", names[a]},
                         {"receiver", names[b]},
                         {"passed", !bad},
                         {"counters", {{"rx_frames", 20000 * seconds}, {"lost_frames", bad ? 3 * seconds : 0}}},
                         {"gauges", {{"latency_p99_ns", 236543.0}}},
                         {"metrics", {{"throughput_bps", rate}, {"loss_ratio", bad ? 1.5e-4 : 0.0}, {"bit_errors", 0}}},
                         {"ber",
                          {{"bits_compared", 8e9},
                           {"bit_errors", 0},
                           {"measured", 0.0},
                           {"upper_bound", 3.7e-10},
                           {"confidence", 0.95},
                           {"target", 1e-12},
                           {"bits_needed_for_target", 3e12},
                           {"seconds_more_for_target", 12000.0}}},
                         {"checks", checks},
                         {"series", series(seconds, "rx_bytes", rate, bad ? 3 : 0)}});
    }
  }
  json starts = json::array(), agents = json::array();
  for (const auto& name : names) {
    starts.push_back({{"agent", name}, {"clock_offset_ns", 1000}, {"clock_rtt_ns", 2000}, {"start_error_ns", 300}});
    agents.push_back({{"name", name},
                      {"hostname", name},
                      {"version", "0.1.0"},
                      {"remote", ""},
                      {"connected_at_end", true},
                      {"connections", 1},
                      {"duplicate_records_dropped", 0},
                      {"records_missing", 0}});
  }
  json test{{"index", 0},
            {"name", "mesh"},
            {"engine", "dpdk"},
            {"topology", "mesh"},
            {"duration_s", seconds},
            {"sample_interval_s", 1},
            {"agents", names},
            {"verdict", "fail"},
            {"problems", json::array()},
            {"warnings", json::array()},
            {"planned_start", "2026-11-24T10:00:00.000Z"},
            {"start_skew_ns", 1000},
            {"starts", starts},
            {"thresholds", json::array()},
            {"streams", streams},
            {"path_faults", json::array()}};
  return {{"schema", "tusk.report/1"},
          {"tusk_version", "bench"},
          {"run_id", fmt::format("synthetic-{}-hosts", hosts)},
          {"profile", {{"name", "synthetic"}, {"file", "synthetic.yaml"}, {"description", ""}, {"source", ""}}},
          {"started", "2026-11-24T10:00:00.000Z"},
          {"finished", "2026-11-24T10:01:00.000Z"},
          {"exit_code", 1},
          {"conclusion", "synthetic"},
          {"missing_agents", json::array()},
          {"agents", agents},
          {"tests", json::array({test})},
          {"faults", json::array()}};
}

struct Opening {
  double render_ms = -1;  // the page's own measure
  double wall_ms = -1;    // Chromium's start to exit, for scale
};

Opening open_page(const std::string& page, const std::string& scratch) {
  const auto start = std::chrono::steady_clock::now();
  const auto rendered = tusk::testing::HeadlessChromium::render(page, scratch);
  Opening out;
  out.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (rendered.attribute("rendered") != "yes" || rendered.attribute("errors")) {
    std::cerr << fmt::format("{} did not draw cleanly: {}\n{}\n", page, rendered.attribute("errors").value_or(""),
                             rendered.log.substr(0, 2000));
    return out;
  }
  out.render_ms = std::stod(rendered.attribute("render-ms").value_or("-1"));
  return out;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? -1 : values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"report.html opening time for a synthetic full-mesh fabric"};
  int hosts = 256, seconds = 10, runs = 3;
  app.add_option("--hosts", hosts, "hosts in the mesh")->capture_default_str()->check(CLI::Range(2, 2048));
  app.add_option("--seconds", seconds, "per-second samples per stream")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  app.add_option("--runs", runs, "openings of each page")->capture_default_str()->check(CLI::Range(1, 50));
  CLI11_PARSE(app, argc, argv);
  if (!tusk::testing::HeadlessChromium::available()) {
    std::cerr << "chromium is not installed (scripts/install-deps.sh installs it)\n";
    return 2;
  }
  const auto scratch = std::filesystem::temp_directory_path() / fmt::format("tusk-report-bench-{}", ::getpid());
  std::filesystem::create_directories(scratch);

  const auto write_page = [&](int n, const std::string& name) {
    const auto start = std::chrono::steady_clock::now();
    const std::string html = tusk::report_html(synthetic_report(n, seconds));
    const double build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const std::string path = (scratch / name).string();
    std::ofstream(path) << html;
    std::cout << fmt::format("{:>5} hosts: {:>7} pairs, page {:.1f} MB, report and page made in {:.0f} ms\n", n,
                             n * (n - 1), html.size() / 1e6, build_ms);
    return path;
  };
  const std::string reference = write_page(2, "reference.html");
  const std::string large = write_page(hosts, "large.html");

  std::vector<double> reference_ms, large_ms, large_wall_ms;
  for (int i = 0; i < runs; ++i) {
    reference_ms.push_back(open_page(reference, scratch.string()).render_ms);
    const Opening opening = open_page(large, scratch.string());
    large_ms.push_back(opening.render_ms);
    large_wall_ms.push_back(opening.wall_ms);
  }
  const double ref = median(reference_ms), big = median(large_ms);
  std::cout << fmt::format(
      "opened in headless Chromium, median of {}: 2 hosts {:.0f} ms, {} hosts {:.0f} ms "
      "(Chromium start to exit {:.0f} ms); {:.1f}x the 2-host page\n",
      runs, ref, hosts, big, median(large_wall_ms), ref > 0 ? big / ref : 0.0);
  std::cout << fmt::format("target: {} hosts open in under 3000 ms: {}\n", hosts,
                           big > 0 && big < 3000 ? "met" : "NOT met");
  std::filesystem::remove_all(scratch);
  return big > 0 ? 0 : 1;
}
