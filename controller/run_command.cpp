#include "controller/run_command.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/build_info.hpp"
#include "common/cli_completion.hpp"
#include "common/cli_suggestion.hpp"
#include "common/heap.hpp"
#include "common/json_text.hpp"
#include "common/logging.hpp"
#include "common/printable.hpp"
#include "common/units.hpp"
#include "common/version.hpp"
#include "controller/actions/act_command.hpp"
#include "controller/actions/report_blame.hpp"
#include "controller/actions/take_actions.hpp"
#include "controller/history/baseline_check.hpp"
#include "controller/history/history_commands.hpp"
#include "controller/history/history_rows.hpp"
#include "controller/history/run_history.hpp"
#include "controller/metrics/metrics_endpoint.hpp"
#include "controller/model/training_model_loader.hpp"
#include "controller/model/training_model_printer.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/report/plan_printer.hpp"
#include "controller/report/report_text.hpp"
#include "controller/report/reports.hpp"
#include "controller/run/agent_identity.hpp"
#include "controller/run/run_orchestrator.hpp"
#include "controller/run_resume.hpp"
#include "controller/series/series_file.hpp"
#include "controller/series/series_outcome.hpp"
#include "controller/series/series_reader.hpp"
#include "controller/switches/snmp_credentials.hpp"
#include "controller/switches/snmp_session.hpp"
#include "controller/switches/switch_queries.hpp"
#include "controller/switches/topology_commands.hpp"

#include "controller/command_flags.hpp"

namespace tusk {
namespace {

// --metrics-listen: serving before anything starts, so a taken port is a usage error, not a
// run without its metrics. Throws std::runtime_error naming the flag.
std::unique_ptr<MetricsEndpoint> start_metrics(const RunFlags& flags, const Profile& profile, RunOptions& options) {
  if (flags.metrics_listen.empty()) return nullptr;
  try {
    MetricsSecurity security = flags.metrics_security;
    if (flags.metrics_tls) {
      if (options.control.insecure) {
        throw std::runtime_error(
            "--metrics-tls serves /metrics with the controller's --cert and --key to scrapers "
            "whose certificate --ca signed: it cannot go with --insecure");
      }
      security.tls = options.control.tls;
    }
    options.live_metrics = std::make_shared<LiveMetrics>(profile);
    return std::make_unique<MetricsEndpoint>(parse_host_port(flags.metrics_listen), options.live_metrics, security);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("--metrics-listen {}: {}", flags.metrics_listen, e.what()));
  }
}

// --only-through LINK --from REPORT (the flows that crossed LINK in REPORT) or --only-failing
// REPORT (what failed in it), and the profile cut down to the tests that had some. Throws
// std::runtime_error naming what is wrong.
void only_flows(const RunFlags& flags, Profile& profile, RunOptions& options) {
  const bool failing = !flags.only_failing.empty();
  const std::string flag = failing ? "--only-failing" : "--only-through";
  const std::string& file_name = failing ? flags.only_failing : flags.from_report;
  if (file_name.empty()) throw std::runtime_error("--only-through needs --from REPORT (an earlier run's report.json)");
  nlohmann::json report;
  try {
    report = read_report_file(file_name);  // a run's directory or its report.json
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{} {}", flag, e.what()));
  }
  try {
    options.only_flows = failing ? select_failing_flows(report) : select_flows_through(report, flags.only_through);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}: {}", flag, file_name, e.what()));
  }
  if (failing) options.retest_of = report.value("run_id", "");
  std::erase_if(profile.tests, [&](const TestSpec& test) { return !options.only_flows->by_test.contains(test.name); });
  if (profile.tests.empty()) {
    throw std::runtime_error(fmt::format("{}: no test of {} is in {}'s {}", flag, profile.file, file_name,
                                         failing ? "failures" : "flows through '" + flags.only_through + "'"));
  }
  std::size_t flows = 0;
  for (const auto& [test, selected] : options.only_flows->by_test) flows += selected.size();
  spdlog::info("{}: {} flow(s) of {} test(s) from {}{}", flag, flows, profile.tests.size(), file_name,
               failing ? fmt::format(": a re-test of run {}'s failures", options.retest_of) : std::string());
}

// The profile's `actions:` on the report just written (the same as `act` on it later). What could
// not be taken is said; the run's exit code stays its verdict's.
void take_profile_actions(const ActionSettings& actions, const nlohmann::ordered_json& report,
                          const std::string& written_to) {
  const std::string file =
      written_to == "-" ? written_to : (std::filesystem::path(written_to) / "report.json").string();
  try {
    const RunBlame blame = blame_from_report(nlohmann::json(report), file);
    if (!take_actions(actions, blame, file, std::cout, std::cerr)) {
      spdlog::error("actions: not every action of the profile's was taken (see above)");
    }
  } catch (const std::exception& e) {
    spdlog::error("actions: {}", e.what());
  }
}

// --snmp-timeout and --snmp-retries, on every switch the run reads: a switch that answers nothing
// costs timeout x (1 + retries) at each reading (three at least: cabling, before, after).
void set_snmp_patience(const RunFlags& flags, std::vector<SwitchQuery>& switches) {
  SnmpTarget patience;
  if (!flags.snmp_timeout.empty()) {
    patience.timeout = duration_flag("--snmp-timeout", flags.snmp_timeout);
    if (patience.timeout < std::chrono::milliseconds(100) || patience.timeout > std::chrono::seconds(60)) {
      throw std::invalid_argument(fmt::format("--snmp-timeout: {} ms is outside 100ms..60s", patience.timeout.count()));
    }
  }
  if (flags.snmp_retries) {
    if (*flags.snmp_retries < 0 || *flags.snmp_retries > 10) {
      throw std::invalid_argument(fmt::format("--snmp-retries: {} is outside 0..10", *flags.snmp_retries));
    }
    patience.retries = *flags.snmp_retries;
  }
  for (auto& query : switches) {
    query.target.timeout = patience.timeout;
    query.target.retries = patience.retries;
  }
}

// The switches a run reads (--snmp-credentials over --topology's) and how. Throws naming the flag.
void switch_options(const RunFlags& flags, RunOptions& options) {
  if (!flags.snmp_credentials.empty()) {
    if (!options.topology)
      throw std::invalid_argument("--snmp-credentials: give --topology too: it says which switches to read");
    options.switches =
        switch_queries(*options.topology, load_snmp_credentials_file(flags.snmp_credentials), flags.snmp_credentials);
  }
  set_snmp_patience(flags, options.switches);
  options.switch_settle = duration_flag("--snmp-settle", flags.snmp_settle);
  options.switch_interval = duration_flag("--snmp-interval", flags.snmp_interval);
  if (options.switch_interval.count() > 0 && options.switch_interval < std::chrono::seconds(1)) {
    throw std::invalid_argument(
        "--snmp-interval: at least 1s (a switch refreshes its counters every few "
        "seconds), or 0 for none");
  }
}

}  // namespace

int command_run(const std::string& file, ControlPlaneFlags& control, const RunFlags& flags) {
  auto profile = load_or_report(file);
  if (!profile) return kExitUsage;
  RunOptions options;
  std::chrono::nanoseconds metrics_linger{};
  try {
    options.control = control.resolve();
    if (!flags.wait.empty()) {
      options.wait_override = std::chrono::duration_cast<std::chrono::milliseconds>(units::parse_duration(flags.wait));
    }
    if (!flags.agent_nodes.empty()) options.control.agent_nodes = load_agent_nodes(flags.agent_nodes);
    if (!flags.topology.empty())
      options.topology = std::make_shared<FabricTopology>(load_topology_file(flags.topology));
    switch_options(flags, options);
    if (profile->cabling == CablingMode::Enforce && !options.topology) {
      throw std::invalid_argument(fmt::format(
          "{}: cabling: enforce checks the cabling against a topology file before any traffic: give --topology FILE "
          "(or set cabling: check, or off); nothing was started",
          profile->file));
    }
    if (!flags.only_through.empty() || !flags.only_failing.empty()) only_flows(flags, *profile, options);
    try {
      metrics_linger = units::parse_duration(flags.metrics_linger);
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("--metrics-linger: {}", e.what()));
    }
    options.checkpoint_every = duration_flag("--checkpoint", flags.checkpoint);
    if (!flags.resume.empty()) {
      if (!flags.out.empty() && std::filesystem::path(flags.out) != std::filesystem::path(flags.resume)) {
        throw std::invalid_argument("--out: a resumed run writes into the directory it resumes: leave --out out");
      }
      options.resume = open_resumed_run(flags.resume, file, flags.topology, options.topology.get());
    }
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return kExitUsage;
  }
  const std::string out = flags.resume.empty() ? flags.out : flags.resume;
  // The run id is only known once the run starts: a default directory is checked by its parent.
  try {
    check_report_directory(out.empty() ? std::string("tusk-reports") : out);
  } catch (const std::exception& e) {
    std::cerr << fmt::format("--out: {}; nothing was started\n", e.what());
    return kExitUsage;
  }
  std::unique_ptr<MetricsEndpoint> metrics;
  try {
    metrics = start_metrics(flags, *profile, options);
  } catch (const std::exception& e) {
    std::cerr << fmt::format("{}; nothing was started\n", e.what());
    return kExitUsage;
  }
  options.lost_after = 2 * options.control.lease + std::chrono::seconds(4);
  options.run_directory = [out](const std::string& run_id) {
    return out.empty() ? fmt::format("tusk-reports/{}", run_id) : out;
  };
  options.checkpoint = [&options](const RunOutcome& so_far) {
    write_checkpoint(so_far, options.run_directory(so_far.run_id));
  };
  options.progress_line = !flags.no_progress && isatty(STDOUT_FILENO) == 1;

  RunOutcome outcome;
  try {
    outcome = run_profile(*profile, options);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return kExitUsage;
  }
  // What the run freed as it ended (its sessions, its live data, the io thread's arena) goes back
  // before the reports are built: glibc would keep those pages, and the reports would add theirs.
  return_free_heap_pages();
  const std::string directory = options.run_directory(outcome.run_id);
  // The summary the views below read; report.json and the page take each test's series from the
  // outcome as they are written.
  auto report = report_json(outcome, StreamBins::Left);
  if (!profile->baseline.empty()) {
    const std::string history = flags.history.path.empty() ? default_history_path() : flags.history.path;
    // Read even with --no-history, which only keeps this run out of it.
    BaselineCheck check = check_against_baseline(profile->baseline, report, history);
    for (const auto& line : check.warnings) spdlog::warn("{}", line);
    const auto& regressions = member_or_null(check.json, "regression_count");
    if (profile->baseline_fail && regressions.is_number_unsigned() && regressions.get<std::uint64_t>() > 0 &&
        outcome.exit_code == kExitPass) {
      // baseline_fail: what got worse fails the run as a threshold would, and every view says so.
      outcome.exit_code = kExitThresholdFailed;
      outcome.conclusion =
          fmt::format("{}, but {} regression(s) against baseline {} (baseline_fail)", outcome.conclusion,
                      regressions.get<std::uint64_t>(), string_member(check.json, "run_id"));
      report["exit_code"] = outcome.exit_code;
      report["conclusion"] = outcome.conclusion;
    }
    report["baseline"] = std::move(check.json);
  }
  // The summary says what the report says, the comparison with the baseline included.
  std::cout << summary_table(outcome, member_or_null(report, "baseline"));
  std::string fallback_parent;  // empty: straight to stdout
  std::error_code no_temp;
  const auto temp = std::filesystem::temp_directory_path(no_temp);
  if (!no_temp) fallback_parent = temp.string();
  const auto fallback = write_reports_somewhere(outcome, report, directory, fallback_parent, std::cout);
  // History is one more view of the report, recorded where the report went; a failure is a warning.
  record_in_history(report, fallback ? fallback->written_to : directory, flags.history);
  if (profile->actions.any())
    take_profile_actions(profile->actions, report, fallback ? fallback->written_to : directory);
  if (!fallback) {
    std::cout << fmt::format("report: {}/report.html, {}/report.json, {}/junit.xml\n", directory, directory, directory);
    if (metrics) metrics->linger(metrics_linger);
    return outcome.exit_code;
  }
  spdlog::error(
      "{}; the report is {} (the run's own exit code would have been {})", fallback->error,
      fallback->written_to == "-" ? std::string("on stdout above") : fmt::format("in {} instead", fallback->written_to),
      outcome.exit_code);
  if (metrics) metrics->linger(metrics_linger);
  return kExitReportElsewhere;
}

// `run`'s options, the longest list of any command.
CLI::App* add_run_command(CLI::App& app, std::string& file, RunFlags& flags, ControlPlaneFlags& control) {
  auto* run = app.add_subcommand("run", "run a profile on its agents and write report.json and junit.xml");
  run->add_option("file", file, "profile YAML file")->required();
  run->footer(
      "Exit status: 0 every threshold met, 1 a threshold failed, 2 usage, profile or configuration error (nothing "
      "started), 3 agents missing or lost, 4 the run finished but its report could not be written to --out (the log "
      "says where it went), 128 + N interrupted by signal N (130 Ctrl-C, 143 SIGTERM; the report says when).");
  control.add_to(*run);
  run->add_option("--out", flags.out,
                  "report directory, new or empty: a report is never overwritten (default tusk-reports/<run id>)");
  run->add_option("--checkpoint", flags.checkpoint,
                  "how often report.json is rewritten while a test runs (marked running), so a controller killed "
                  "mid-run leaves its results up to then; 0 for never")
      ->capture_default_str();
  run->add_option("--wait", flags.wait, "how long to wait for agents (default: the profile's agents.wait)");
  run->add_flag("--no-progress", flags.no_progress, "no live progress line");
  flags.history.add_to(*run);
  auto* metrics_listen = run->add_option("--metrics-listen", flags.metrics_listen,
                                         "serve Prometheus metrics on this address while the run lasts, ip:port");
  run->add_option("--metrics-linger", flags.metrics_linger, "keep serving the final metrics this long after the run")
      ->capture_default_str()
      ->needs(metrics_listen);
  run->add_option("--metrics-auth", flags.metrics_security.basic_auth,
                  "HTTP basic authentication for /metrics: a file whose first line is user:password")
      ->needs(metrics_listen);
  run->add_flag("--metrics-tls", flags.metrics_tls,
                "serve /metrics over HTTPS with --cert and --key, only to scrapers whose certificate --ca signed")
      ->needs(metrics_listen);
  auto* only_through =
      run->add_option("--only-through", flags.only_through,
                      "re-test only the flows that crossed this link in --from's report (e.g. 'l1:s2 -> s2:l1')");
  auto* from = run->add_option("--from", flags.from_report, "the earlier run's report.json, for --only-through");
  run->add_option("--only-failing", flags.only_failing,
                  "re-test only what failed in this earlier run (its directory or report.json): its failing flows, "
                  "and whole the tests that failed on a host's own port or as a whole; the history links the two")
      ->excludes(from)
      ->excludes(only_through);
  run->add_option("--resume", flags.resume,
                  "go on with the run in this directory, whose controller stopped during a shift schedule: from the "
                  "step after the last it finished (its schedule.ledger), with the same profile, --topology and "
                  "agents; its report and series from before are kept beside the new ones")
      ->excludes(from)
      ->excludes(only_through)
      ->excludes("--only-failing");
  run->add_option("--agent-nodes", flags.agent_nodes,
                  "the node each agent is on, one 'AGENT NODE' a line: for agents not named as their host whose "
                  "certificates do not name it (the node a run's actions drain, taint or resume)");
  run->add_option("--topology", flags.topology,
                  "topology YAML: the names of devices, ports and cables, for the links a routed test blames");
  run->add_option("--snmp-credentials", flags.snmp_credentials,
                  "SNMP credentials YAML for the switches the topology gives a management address: their counters "
                  "and LLDP neighbours are read before and after each test");
  run->add_option("--snmp-settle", flags.snmp_settle,
                  "how long after a test's traffic stops its switches' counters are read (they refresh theirs "
                  "every few seconds)")
      ->capture_default_str();
  const SnmpTarget patience;
  run->add_option("--snmp-timeout", flags.snmp_timeout,
                  fmt::format("how long one SNMP request waits for a switch's answer before it is asked again "
                              "(100ms..60s; default {} ms)",
                              patience.timeout.count()));
  run->add_option("--snmp-retries", flags.snmp_retries,
                  fmt::format("how many times an unanswered SNMP request is asked again before the switch is "
                              "unreadable (0..10; default {})",
                              patience.retries));
  run->add_option("--snmp-interval", flags.snmp_interval,
                  "also read the switches' counters this often while a test runs, to say when loss began (0: only "
                  "before and after)")
      ->capture_default_str();
  return run;
}

}  // namespace tusk
