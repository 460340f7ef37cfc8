// How far one tusk-controller scales: N simulated agents (default 4,096) in this process, each a
// real TLS connection on 127.0.0.1 speaking the real protocol, against the real controller binary
// running a profile on all of them. Prints what a fabric owner asks of a control plane: time to
// register and plan everyone, clock-sync time, start skew, samples ingested per controller core,
// controller memory per agent, and what the report cost. Measures; asserts nothing.
// A soak: `--topology mesh` gives every agent a stream from each other one (64 agents: 4,032
// streams), and a long --duration at a short --sample-interval shows whether the controller's
// memory grows with time (its RSS at 5 min, or a quarter of the way into a shorter test, half way
// and at the end), what one stream-sample costs it in CPU, and what the report weighs per stream.
//
//   controller_scale [--agents 4096] [--threads 1] [--dialling 128] [--duration 10s] [--sample-interval 1s]
//                    [--topology pairs|mesh] [--checkpoint 1m]
#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/controller_scale/agent_certificates.hpp"
#include "bench/controller_scale/sim_agent.hpp"
#include "common/clock.hpp"
#include "common/units.hpp"
#include "tests/e2e/process.hpp"
#include "tests/support/build_paths.hpp"

namespace {
namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace tusk;
using namespace tusk::bench;

// Resident memory of a process in KiB (VmRSS), 0 once it is gone.
// A line of the process's status in KiB: "VmRSS:" now, "VmHWM:" the most it ever held (the
// kernel's high-water mark, which a reading every 100 ms can miss the top of).
std::uint64_t status_kib(pid_t pid, std::string_view key) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size()));
  }
  return 0;
}
std::uint64_t rss_kib(pid_t pid) {
  return status_kib(pid, "VmRSS:");
}

// User plus system CPU time of a process, in seconds.
double cpu_seconds(pid_t pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) {
      stime = std::stoull(field);
      break;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

void raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

struct Watch {
  std::int64_t at_ns;
  double cpu_s;
  std::uint64_t rss_kib;
  std::uint64_t hwm_kib;
};

// CPU seconds the controller spent between two instants, from the watch series.
double cpu_between(const std::vector<Watch>& series, std::int64_t from_ns, std::int64_t to_ns) {
  const Watch* first = nullptr;
  const Watch* last = nullptr;
  for (const auto& watch : series) {
    if (watch.at_ns <= from_ns || !first) first = &watch;
    if (watch.at_ns <= to_ns) last = &watch;
  }
  return first && last ? last->cpu_s - first->cpu_s : 0;
}

}  // namespace

int main(int argc, char** argv) {
  int agents = 4096;
  int threads = 1;
  int dialling = 128;
  std::string duration = "10s";
  std::string sample_interval = "1s";
  std::string topology = "pairs";
  std::string controller_bin = tusk::build_paths::controller_bin();
  std::string checkpoint;  // empty: the controller's default
  bool keep = false;
  CLI::App app{"controller_scale: one tusk-controller against N simulated agents over TLS on 127.0.0.1"};
  app.add_option("--agents", agents, "simulated agents (even: they are paired)")
      ->check(CLI::Range(2, 65536))
      ->capture_default_str();
  app.add_option("--threads", threads, "io threads of the simulated agents")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--dialling", dialling, "handshakes each io thread has under way at once")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  app.add_option("--duration", duration, "the test's duration")->capture_default_str();
  app.add_option("--sample-interval", sample_interval, "the test's sample interval")->capture_default_str();
  app.add_option("--topology", topology, "pairs: one stream per agent; mesh: one from every other agent")
      ->check(CLI::IsMember({"pairs", "mesh"}))
      ->capture_default_str();
  app.add_option("--controller", controller_bin, "tusk-controller binary")->capture_default_str();
  app.add_flag("--keep", keep, "keep the scratch directory (logs, report)");
  app.add_option("--checkpoint", checkpoint, "the controller's --checkpoint (how often report.json is rewritten)");
  CLI11_PARSE(app, argc, argv);
  if (agents % 2 != 0) ++agents;
  const auto duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(units::parse_duration(duration));
  raise_descriptor_limit();

  const std::string dir = testing::make_scratch_dir("tusk-scale");
  if (!testing::make_certs(dir + "/certs", {})) {
    std::fprintf(stderr, "controller_scale: make-certs.sh failed\n");
    return 1;
  }
  const std::string profile = dir + "/profile.yaml";
  std::ofstream(profile) << fmt::format(R"(name: controller-scale
agents:
  count: {}
  wait: 300s
tests:
  - name: scale
    engine: dpdk
    topology: {}
    duration: {}
    sample_interval: {}
    rate: 1kpps
    frame_size: 1000B
)",
                                        agents, topology, duration, sample_interval);
  const int port = testing::free_port();
  std::vector<std::string> controller_argv{controller_bin,
                                           "run",
                                           profile,
                                           "--listen",
                                           fmt::format("127.0.0.1:{}", port),
                                           "--ca",
                                           dir + "/certs/ca.pem",
                                           "--cert",
                                           dir + "/certs/controller.pem",
                                           "--key",
                                           dir + "/certs/controller.key",
                                           "--out",
                                           dir + "/report",
                                           "--no-progress",
                                           "--no-history"};
  if (!checkpoint.empty()) controller_argv.insert(controller_argv.end(), {"--checkpoint", checkpoint});
  testing::Process controller(controller_argv, dir + "/controller.log");
  if (!testing::wait_for_text(controller.log_path(), "listening for agents", std::chrono::seconds(20))) {
    std::fprintf(stderr, "controller_scale: the controller did not start:\n%s\n", controller.log().c_str());
    return 1;
  }
  const std::uint64_t baseline_rss = rss_kib(controller.pid());

  const auto certs_begin = steady_ns();
  AgentCertificates certificates(dir + "/certs");
  std::vector<std::unique_ptr<asio::io_context>> ios;
  for (int i = 0; i < threads; ++i) ios.push_back(std::make_unique<asio::io_context>());
  FleetMetrics metrics;
  std::vector<std::vector<std::unique_ptr<SimAgent>>> fleets(threads);
  std::vector<std::unique_ptr<DialQueue>> dial_queues;
  for (int i = 0; i < threads; ++i) dial_queues.push_back(std::make_unique<DialQueue>(dialling));
  for (int i = 0; i < agents; ++i) {
    const std::string name = fmt::format("sim-{:05}", i);
    certificates.add(name);
    fleets[i % threads].push_back(std::make_unique<SimAgent>(*ios[i % threads], name, certificates,
                                                             HostPort{"127.0.0.1", static_cast<std::uint16_t>(port)},
                                                             metrics, *dial_queues[i % threads]));
  }
  const double certs_s = (steady_ns() - certs_begin) / 1e9;

  // Heartbeat checks twice a second per thread, as every agent makes them (one second interval).
  std::vector<std::unique_ptr<asio::steady_timer>> tickers;
  std::function<void(int)> tick = [&](int t) {
    for (auto& agent : fleets[t]) agent->heartbeat();
    tickers[t]->expires_after(std::chrono::milliseconds(500));
    tickers[t]->async_wait([&, t](boost::system::error_code ec) {
      if (!ec) tick(t);
    });
  };
  const double own_cpu_before = cpu_seconds(getpid());
  const std::int64_t t0 = steady_ns();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) tickers.push_back(std::make_unique<asio::steady_timer>(*ios[t]));
  for (int t = 0; t < threads; ++t) {
    for (auto& agent : fleets[t]) asio::post(*ios[t], [&agent] { agent->connect(); });
    asio::post(*ios[t], [&, t] { tick(t); });
    workers.emplace_back([&, t] { ios[t]->run(); });
  }

  std::vector<Watch> series;
  double own_cpu_at_registration = -1;  // this process's CPU when the last agent registered
  std::optional<int> exit_code;
  std::int64_t exited_ns = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300) + duration_ms;
  while (std::chrono::steady_clock::now() < deadline) {
    series.push_back({steady_ns(), cpu_seconds(controller.pid()), rss_kib(controller.pid()),
                      status_kib(controller.pid(), "VmHWM:")});
    if (own_cpu_at_registration < 0 && metrics.registered.count() >= static_cast<std::uint64_t>(agents)) {
      own_cpu_at_registration = cpu_seconds(getpid());
    }
    exit_code = controller.wait(std::chrono::milliseconds(100));
    if (exit_code) {
      exited_ns = steady_ns();
      break;
    }
  }
  for (auto& io : ios) io->stop();
  for (auto& worker : workers) worker.join();

  std::uint64_t peak_rss = 0;
  for (const auto& watch : series) peak_rss = std::max({peak_rss, watch.rss_kib, watch.hwm_kib});
  // The controller's RSS while the test ran: the least of the readings in the 5 s up to `ns`, what
  // it holds, apart from a checkpoint's moment of building a report (the peak shows those).
  const auto rss_at = [&](std::int64_t ns) {
    std::uint64_t rss = 0;
    for (const auto& watch : series) {
      if (watch.at_ns > ns || watch.at_ns < ns - 5'000'000'000) continue;
      rss = rss == 0 ? watch.rss_kib : std::min(rss, watch.rss_kib);
    }
    return rss;
  };
  const std::int64_t first_sample_ns = metrics.samples.first(), last_sample_ns = metrics.samples.last();
  // The first reading at 5 min, or a quarter of the way in a shorter test: past the start, before
  // most samples arrived.
  const std::int64_t first_reading_ns =
      first_sample_ns + std::min(std::int64_t{std::chrono::nanoseconds(std::chrono::minutes(5)).count()},
                                 (last_sample_ns - first_sample_ns) / 4);
  const auto seconds_after_t0 = [&](std::int64_t ns) { return (ns - t0) / 1e9; };
  const double ingest_cpu = cpu_between(series, metrics.samples.first(), metrics.results.last());
  const double ingest_and_report_cpu =
      series.empty() ? 0 : cpu_between(series, metrics.samples.first(), series.back().at_ns);
  const std::uint64_t samples = metrics.samples.count();
  const std::uint64_t stream_samples = metrics.stream_samples.load();
  const std::uint64_t streams = samples ? stream_samples * static_cast<std::uint64_t>(agents) / samples : 0;
  std::error_code ec;
  const auto report_bytes = fs::file_size(dir + "/report/report.json", ec);

  std::printf("controller_scale: %d agents, %d io thread(s) here, test %s sampled every %s\n", agents, threads,
              duration.c_str(), sample_interval.c_str());
  std::printf("  agent certificates made        %8.2f s\n", certs_s);
  std::printf("  all registered                 %8.2f s after the first dial   (%llu of %d)\n",
              seconds_after_t0(metrics.registered.last()), static_cast<unsigned long long>(metrics.registered.count()),
              agents);
  std::printf(
      "  CPU spent registering          %8.2f s controller, %.2f s simulated agents (TLS handshakes both sides)\n",
      cpu_between(series, t0, metrics.registered.last()), own_cpu_at_registration - own_cpu_before);
  std::printf("  clock sync                     %8.2f s   (first probe to last, %llu probes)\n",
              metrics.probes.width_s(), static_cast<unsigned long long>(metrics.probes.count()));
  // A phase the run never reached says so instead of printing an instant that never was.
  const auto when = [](bool reached, double seconds) {
    return reached ? fmt::format("{:8.2f}", seconds) : std::string("     n/a");
  };
  std::printf("  plan distribution              %s s   (first plan received to last ack sent)\n",
              when(!metrics.plan_acks.empty(), (metrics.plan_acks.last() - metrics.plans.first()) / 1e9).c_str());
  std::printf(
      "  registered and planned         %s s after the first dial   (goal: under 5 s at 4,096)\n",
      when(metrics.plan_acks.count() >= static_cast<std::uint64_t>(agents), seconds_after_t0(metrics.plan_acks.last()))
          .c_str());
  std::printf("  start skew, planned            %8.3f ms  (spread of the agents' start instants; goal: under 10 ms)\n",
              metrics.planned_starts.width_s() * 1e3);
  std::printf(
      "  start skew, as started here    %8.3f ms  (this process's timers, on %d thread(s)); late start orders: %llu\n",
      metrics.actual_starts.width_s() * 1e3, threads,
      static_cast<unsigned long long>(metrics.late_start_orders.load()));
  std::printf(
      "  samples ingested               %8llu in %.2f controller CPU s: %.0f samples/s per core (goal: 100,000)\n",
      static_cast<unsigned long long>(samples), ingest_cpu, ingest_cpu > 0 ? samples / ingest_cpu : 0.0);
  std::printf("  sample size                    %8.0f bytes on the wire, before TLS; %.0f bytes per stream-sample\n",
              samples ? static_cast<double>(metrics.sample_bytes.load()) / samples : 0.0,
              stream_samples ? static_cast<double>(metrics.sample_bytes.load()) / stream_samples : 0.0);
  std::printf(
      "  stream-samples ingested        %8llu from %llu streams: %.0f per controller CPU second, %.0f with the "
      "verdict and report (issue 35's goal: 250,000)\n",
      static_cast<unsigned long long>(stream_samples), static_cast<unsigned long long>(streams),
      ingest_cpu > 0 ? stream_samples / ingest_cpu : 0.0,
      ingest_and_report_cpu > 0 ? stream_samples / ingest_and_report_cpu : 0.0);
  if (!metrics.samples.empty()) {
    const double rss_first = rss_at(first_reading_ns) / 1024.0,
                 rss_middle = rss_at((first_sample_ns + last_sample_ns) / 2) / 1024.0,
                 rss_end = rss_at(last_sample_ns) / 1024.0;
    std::printf(
        "  controller RSS while sampled   %8.1f MiB at %.0f s, %.1f MiB half way, %.1f MiB at the end (%.0f s): "
        "end/first %.2f, %.1f KiB per stream\n",
        rss_first, (first_reading_ns - first_sample_ns) / 1e9, rss_middle, rss_end,
        (last_sample_ns - first_sample_ns) / 1e9, rss_first > 0 ? rss_end / rss_first : 0.0,
        streams ? rss_end * 1024.0 / static_cast<double>(streams) : 0.0);
  }
  if (!metrics.samples.empty()) {
    // The checkpoints' cost: the most the controller held while sampled (a checkpoint's moment
    // included) against what it held at the end of the sampling (the least of its last 5 s).
    std::uint64_t peak_sampled = 0;
    for (const auto& watch : series) {
      if (watch.at_ns >= first_sample_ns && watch.at_ns <= last_sample_ns)
        peak_sampled = std::max(peak_sampled, watch.rss_kib);
    }
    const std::uint64_t steady = rss_at(last_sample_ns);
    std::printf(
        "  controller RSS, checkpoints    %8.1f MiB at most while sampled, %.1f MiB steady at the end: %.2f x "
        "(issue 59's goal: 1.25)\n",
        peak_sampled / 1024.0, steady / 1024.0, steady > 0 ? static_cast<double>(peak_sampled) / steady : 0.0);
  }
  std::printf(
      "  controller memory              %8.1f MiB at peak (the kernel's high-water mark, the run's end included), "
      "%.1f MiB idle: %.0f KiB per agent (goal: under 1,024)\n",
      peak_rss / 1024.0, baseline_rss / 1024.0,
      peak_rss > baseline_rss ? static_cast<double>(peak_rss - baseline_rss) / agents : 0.0);
  if (!metrics.samples.empty() && rss_at(last_sample_ns) > 0) {
    std::printf("  controller peak / steady       %8.2f x (issue 59's goal: 1.25)\n",
                static_cast<double>(peak_rss) / static_cast<double>(rss_at(last_sample_ns)));
  }
  std::printf("  verdict and report             %8.2f s from the last result to exit; report.json %.1f MiB\n",
              exited_ns && !metrics.results.empty() ? (exited_ns - metrics.results.last()) / 1e9 : 0.0,
              ec ? 0.0 : report_bytes / 1048576.0);
  if (!ec && streams > 0) {
    std::printf("  report.json per stream         %8.1f KiB\n", report_bytes / 1024.0 / static_cast<double>(streams));
  }
  std::printf("  controller exit code           %8d   refusals %llu, connections lost %llu\n", exit_code.value_or(-1),
              static_cast<unsigned long long>(metrics.refusals.load()),
              static_cast<unsigned long long>(metrics.disconnects.load()));
  if (keep || !exit_code || *exit_code != 0) {
    std::printf("  logs and report kept in %s\n", dir.c_str());
  } else {
    fs::remove_all(dir, ec);
  }
  return exit_code && *exit_code == 0 ? 0 : 1;
}
