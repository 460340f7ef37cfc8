// A night in compressed time (issue 59): the controller's ingest of a soak — RunData (every bound,
// each stream's bins and window tally) and the run's series file with the profile's default
// retention — fed N agents × S streams of 1 s samples for H hours as fast as it takes them, the
// writer kept up with (a flush every 10 s of samples, as a run's commits keep it). Samples are
// compact, as agents send them (names once, then values). At the injected hours one stream loses
// frames for 30 s. Prints, each simulated hour: the process's RSS, the series file's size, and
// the rate; at the end: whether each injected fault's window is named (the check text the report
// shows, from the same tally), the file's bytes per stream-hour, and how long `series` takes to
// print one stream's whole night. Exits 1 when a fault is not named or RSS grew more than 1.1×
// from hour 1 to the end.
//
//   series_night [--agents 512] [--streams 8] [--hours 12] [--faults 3,7] [--dir DIR] [--keep]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/clock.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/run/run_data.hpp"
#include "controller/series/series_file.hpp"
#include "controller/series/series_reader.hpp"
#include "controller/verdict/verdict.hpp"

namespace {

using namespace tusk;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double seconds_since(Clock::time_point began) {
  return std::chrono::duration<double>(Clock::now() - began).count();
}

double rss_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

std::uint64_t file_bytes(const fs::path& path) {
  std::uint64_t bytes = 0;
  for (const char* suffix : {"", "-wal"}) {
    std::error_code error;
    const auto size = fs::file_size(path.string() + suffix, error);
    if (!error) bytes += size;
  }
  return bytes;
}

// A DPDK receiver's counters and gauges, as the agent names them.
const std::vector<std::string> kCounters{"rx_frames",        "rx_bytes",         "lost_frames",    "gap_lost_frames",
                                         "duplicate_frames", "reordered_frames", "errored_frames", "bit_errors",
                                         "bits_checked",     "integrity_errors", "traffic_gaps",   "link_flaps"};
const std::vector<std::string> kGauges{"latency_p50_ns", "latency_p99_ns", "path_mtu"};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"series_night: a night of samples through the controller's ingest and series file, in compressed time"};
  int agents = 512, streams = 8, hours = 12;
  std::vector<int> faults{3, 7};
  std::string dir;
  bool keep = false;
  app.add_option("--agents", agents, "simulated agents")->check(CLI::Range(1, 65536))->capture_default_str();
  app.add_option("--streams", streams, "streams a agent")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--hours", hours, "hours of 1 s samples")->check(CLI::Range(1, 48))->capture_default_str();
  app.add_option("--faults", faults, "hours at which a stream loses frames for 30 s")->delimiter(',');
  app.add_option("--dir", dir, "where the series file goes (default: a temporary directory)");
  app.add_flag("--keep", keep, "keep the series file");
  CLI11_PARSE(app, argc, argv);

  const fs::path where =
      dir.empty() ? fs::temp_directory_path() / fmt::format("tusk-night-{}", ::getpid()) : fs::path(dir);
  fs::create_directories(where);
  const fs::path series_path = where / kSeriesFileName;
  fs::remove(series_path);
  const Profile profile = load_profile_text(fmt::format(R"(name: night
agents: {{count: {}}}
tests:
  - name: night
    engine: dpdk
    duration: {}h
    sample_interval: 1s
    thresholds: {{window: 60s, max_lost_frames: 0}}
)",
                                                        agents, hours),
                                            "night.yaml");
  const TestSpec& spec = profile.tests.at(0);
  RunData data("night", {most_samples(spec.duration, spec.sample_interval)});
  std::vector<std::string> names;
  for (int a = 0; a < agents; ++a) {
    names.push_back(fmt::format("host-{:05}", a));
    data.expect(names.back(), 0, static_cast<std::size_t>(streams));
  }
  data.judge_windows(0, spec);
  // The pace admits the whole night at once: its test began `hours` + 1 ago.
  data.pace(0, realtime_ns() - std::int64_t{hours + 1} * 3'600'000'000'000, spec.sample_interval);
  const double idle_mib = rss_mib();
  const std::uint64_t samples = static_cast<std::uint64_t>(hours) * 3600;
  std::vector<double> rss_by_hour;
  std::vector<std::uint64_t> file_by_hour;
  SeriesFileStats stats;
  const auto began = Clock::now();
  {
    SeriesFile file(series_path.string(), "night", {}, profile.series);
    data.write_series_to(&file);
    fmt::print(
        "{} agents x {} streams, {} h of 1 s samples ({:.0f} M stream-samples), series.full {} s, budget {} GiB\n",
        agents, streams, hours, static_cast<double>(samples) * agents * streams / 1e6,
        profile.series.full.count() / 1000, profile.series.budget >> 30);
    fmt::print("{:>4} {:>10} {:>12} {:>10} {:>16}\n", "hour", "RSS MiB", "series MiB", "wall s", "samples/s");
    std::vector<std::uint64_t> bytes(static_cast<std::size_t>(agents * streams), 0);
    std::vector<std::uint64_t> lost(bytes.size(), 0);
    for (std::uint64_t i = 1; i <= samples; ++i) {
      for (int a = 0; a < agents; ++a) {
        proto::Record record;
        auto& sample = *record.mutable_sample();
        sample.set_run_id("night");
        sample.set_index(static_cast<std::uint32_t>(i));
        sample.set_elapsed_ms(i * 1000);
        sample.set_agent_time_ns(1'795'000'000'000'000'000 + static_cast<std::int64_t>(i) * 1'000'000'000 +
                                 (a % 7) * 1000);
        for (int s = 0; s < streams; ++s) {
          const std::size_t k = static_cast<std::size_t>(a * streams + s);
          bytes[k] += 1'250'000'000 + (i % 3) * 1500;  // 10 Gbit/s, a frame more or less
          for (const int hour : faults) {
            const std::uint64_t at = static_cast<std::uint64_t>(hour) * 3600 + 600;
            if (a == (hour * 37) % agents && s == hour % streams && i >= at && i < at + 30) lost[k] += 2;
          }
          auto& stream = *sample.add_streams();
          stream.set_stream_id(fmt::format("rx:peer-{}/{}", a, s));
          if (i == 1) {
            stream.set_kind("rx");
            stream.set_peer(fmt::format("host-{:05}", (a + 1) % agents));
            for (const auto& name : kCounters) stream.add_counter_names(name);
            for (const auto& name : kGauges) stream.add_gauge_names(name);
          }
          const std::uint64_t frames = bytes[k] / 1500;
          for (const std::uint64_t value :
               {frames, bytes[k], lost[k], std::uint64_t{0}, std::uint64_t{0}, std::uint64_t{0}, std::uint64_t{0},
                std::uint64_t{0}, bytes[k] * 8, std::uint64_t{0}, std::uint64_t{0}, std::uint64_t{0}}) {
            stream.add_counter_values(value);
          }
          stream.add_gauge_values(4'000 + static_cast<double>((i * 7 + k) % 50));
          stream.add_gauge_values(9'000 + static_cast<double>((i * 13 + k) % 400));
          stream.add_gauge_values(1500);
        }
        data.on_record(names[static_cast<std::size_t>(a)], std::move(record));
      }
      if (i % 10 == 0) file.flush();
      if (i % 3600 == 0) {
        rss_by_hour.push_back(rss_mib());
        file_by_hour.push_back(file_bytes(series_path));
        const double wall = seconds_since(began);
        fmt::print("{:>4} {:>10.1f} {:>12.1f} {:>10.1f} {:>16.0f}\n", i / 3600, rss_by_hour.back(),
                   static_cast<double>(file_bytes(series_path)) / (1 << 20), wall,
                   static_cast<double>(i) * agents * streams / wall);
        std::fflush(stdout);
      }
    }
    file.flush();
    stats = file.stats();
    if (const auto problem = file.problem()) fmt::print("series problem: {}\n", *problem);
  }
  const std::uint64_t series_size = file_bytes(series_path);
  fmt::print("\nidle {:.1f} MiB; RSS hour 1 {:.1f} MiB, hour {} {:.1f} MiB: {:.3f}x\n", idle_mib, rss_by_hour.front(),
             hours, rss_by_hour.back(), rss_by_hour.back() / rss_by_hour.front());
  fmt::print(
      "series.sqlite {:.1f} MiB: {} samples written, {} pruned past series.full, {} over budget; {:.0f} bytes a "
      "stream-hour over the night\n",
      static_cast<double>(series_size) / (1 << 20), stats.samples_written, stats.samples_pruned,
      stats.samples_over_budget, static_cast<double>(series_size) / (static_cast<double>(agents) * streams * hours));
  if (hours > 1) {
    // Past the first hour the full-resolution horizon is full: what the file grows by is the rest.
    fmt::print("grown from hour 1 to hour {}: {:.0f} bytes a stream-hour (issue 59's goal: 4 KiB)\n", hours,
               static_cast<double>(file_by_hour.back() - file_by_hour.front()) /
                   (static_cast<double>(agents) * streams * (hours - 1)));
  }

  // The windows the report names: each stream's tally judged as judge_test judges it.
  int named = 0;
  data.with([&](RunState& state) {
    for (auto& [key, test] : state.tests) {
      for (auto& [id, series] : test.series) {
        series.windows.close();
        if (series.windows.failed == 0) continue;
        StreamVerdict verdict;
        verdict.agent = key.second;
        judge_windows(verdict, series.windows);
        const std::uint64_t hour = series.windows.first->start_ms / 3'600'000;
        const bool injected = std::find(faults.begin(), faults.end(), static_cast<int>(hour)) != faults.end();
        named += injected ? 1 : 0;
        for (const auto& check : verdict.checks) {
          if (!check.passed)
            fmt::print("{} {}: {}{}\n", key.second, id, check.describe(), injected ? "" : " (not injected!)");
        }
      }
    }
  });
  fmt::print("faults named: {} of {}\n", named, faults.size());

  const auto read_began = Clock::now();
  std::ostringstream night;
  const auto lines =
      print_series(where.string(), {0, names[static_cast<std::size_t>((faults.front() * 37) % agents)], ""},
                   SeriesFormat::Table, night, SeriesResolution::Night);
  fmt::print("series of one agent's {} streams, the whole night: {} lines in {:.2f} s\n", streams, lines,
             seconds_since(read_began));
  if (!keep) fs::remove_all(where);
  const bool flat = rss_by_hour.back() <= 1.1 * rss_by_hour.front();
  return named == static_cast<int>(faults.size()) && flat ? 0 : 1;
}
