#include "controller/commands.hpp"

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
#include "controller/plan/plan_printer.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/report/report_text.hpp"
#include "controller/report/reports.hpp"
#include "controller/run/run_orchestrator.hpp"
#include "controller/series/series_file.hpp"
#include "controller/series/series_outcome.hpp"
#include "controller/series/series_reader.hpp"
#include "controller/switches/snmp_credentials.hpp"
#include "controller/switches/switch_queries.hpp"
#include "controller/switches/topology_commands.hpp"

namespace tusk {

namespace {

// Options every command that talks to agents shares.
struct ControlPlaneFlags {
  std::string listen = "0.0.0.0:7420";
  std::string lease = "3s";
  ControlPlaneOptions options;

  CLI::Option* listen_option = nullptr;

  void add_to(CLI::App& command) {
    listen_option =
        command
            .add_option("--listen", listen, "address to accept agents on, host:port (with --insecure: 127.0.0.1:7420)")
            ->capture_default_str();
    command.add_option("--ca", options.tls.ca_file, "CA certificate (PEM) that signs agent certificates");
    command.add_option("--cert", options.tls.cert_file, "controller certificate (PEM)");
    command.add_option("--key", options.tls.key_file, "controller private key (PEM)");
    command.add_flag("--insecure", options.insecure, "plaintext, unauthenticated control plane (labs only)");
    command.add_option("--lease", lease, "agents stop traffic after this long without hearing from us")
        ->capture_default_str();
  }

  // Throws std::invalid_argument with the flag's name.
  ControlPlaneOptions resolve() {
    ControlPlaneOptions resolved = options;
    if (!options.insecure) {
      std::vector<std::string> missing;
      if (options.tls.ca_file.empty()) missing.push_back("--ca");
      if (options.tls.cert_file.empty()) missing.push_back("--cert");
      if (options.tls.key_file.empty()) missing.push_back("--key");
      if (!missing.empty()) {
        throw std::invalid_argument(fmt::format(
            "no {} given: mutual TLS needs --ca (the CA that signs the agents' certificates), --cert and --key (the "
            "controller's own; scripts/make-certs.sh makes a lab set), or --insecure for a plaintext lab control plane",
            fmt::join(missing, ", ")));
      }
    }
    if (options.insecure &&
        !(options.tls.ca_file.empty() && options.tls.cert_file.empty() && options.tls.key_file.empty())) {
      spdlog::warn(
          "--insecure beside certificates: the control plane is plaintext and unauthenticated, and --ca, --cert and "
          "--key are not used for it; leave --insecure out for mutual TLS");
    }
    // Without TLS anyone who reaches the port can register as any agent: the default address is
    // then this host's loopback, and every address only when --listen says so, with a warning.
    const bool listen_given = listen_option != nullptr && listen_option->count() > 0;
    if (options.insecure && !listen_given) listen = "127.0.0.1:7420";
    resolved.listen = parse_host_port(listen);
    if (options.insecure && listen_given && (resolved.listen.host == "0.0.0.0" || resolved.listen.host == "::")) {
      spdlog::warn(
          "--insecure on {}: anyone who reaches this host on port {} can register as any agent and "
          "read its plan; use a lab network only",
          resolved.listen.host, resolved.listen.port);
    }
    try {
      resolved.lease = std::chrono::duration_cast<std::chrono::milliseconds>(units::parse_duration(lease));
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("--lease: {}", e.what()));
    }
    if (resolved.lease < std::chrono::milliseconds(300)) throw std::invalid_argument("--lease: must be at least 300ms");
    return resolved;
  }
};

std::optional<Profile> load_or_report(const std::string& path) {
  try {
    return load_profile_file(path);
  } catch (const ProfileInvalid& invalid) {
    for (const auto& error : invalid.errors()) std::cerr << error.to_string() << "\n";
    std::cerr << fmt::format("{}: {} error(s); nothing was started\n", path, invalid.errors().size());
    return std::nullopt;
  }
}

int command_validate(const std::vector<std::string>& files) {
  int status = kExitPass;
  for (const auto& file : files) {
    auto profile = load_or_report(file);
    if (!profile) {
      status = kExitUsage;
      continue;
    }
    std::cout << fmt::format("{}: valid profile '{}' with {} test(s)\n", file, profile->name, profile->tests.size());
  }
  return status;
}

// Agent names for `plan` without live agents: the profile's hosts, else --agents, else
// "agent-1".."agent-N" for a count.
std::vector<std::string> offline_agents(const Profile& profile, const std::vector<std::string>& given) {
  std::vector<std::string> names = given;
  if (names.empty()) names = profile.agents.hosts;
  if (names.empty() && profile.agents.count && profile.agents.patterns.empty()) {
    for (std::uint32_t i = 1; i <= *profile.agents.count; ++i) names.push_back(fmt::format("agent-{}", i));
  }
  if (names.empty()) {
    throw PlanError("the profile selects agents by pattern: name them with --agents a,b,c to expand the plan");
  }
  auto selection = select_agents(profile.agents, names);
  if (!selection.complete) throw PlanError(fmt::format("cannot select agents: {}", selection.shortfall));
  return selection.chosen;
}

int command_plan(const std::string& file, const std::vector<std::string>& agents, const std::string& topology_file,
                 bool as_json) {
  auto profile = load_or_report(file);
  if (!profile) return kExitUsage;
  std::optional<FabricTopology> topology;
  if (!topology_file.empty()) {
    try {
      topology = load_topology_file(topology_file);
    } catch (const TopologyFileInvalid& invalid) {
      for (const auto& error : invalid.errors()) std::cerr << error.to_string() << "\n";
      return kExitUsage;
    } catch (const std::exception& e) {
      std::cerr << fmt::format("{}: {}\n", topology_file, e.what());
      return kExitUsage;
    }
  }
  try {
    const auto plan =
        expand_plan(*profile, offline_agents(*profile, agents), "plan-only", topology ? &*topology : nullptr);
    if (as_json) {
      std::cout << json_text(plan_json(*profile, plan)) << "\n";
    } else {
      std::cout << plan_text(*profile, plan);
    }
    return kExitPass;
  } catch (const PlanError& e) {
    std::cerr << fmt::format("{}: {}\n", file, e.what());
    return kExitUsage;
  }
}

// The communication of a training job described by a model file; nothing is run.
int command_model(const std::string& file, bool as_json, bool binary_units) {
  traffic::TrainingSpec spec;
  try {
    spec = load_model_file(file);
  } catch (const ModelFileInvalid& invalid) {
    for (const auto& error : invalid.errors()) std::cerr << error.to_string() << "\n";
    std::cerr << fmt::format("{}: {} error(s)\n", file, invalid.errors().size());
    return kExitUsage;
  }
  const auto report = traffic::analyse(spec);
  if (as_json) {
    std::cout << json_text(traffic::model_json(spec, report)) << "\n";
  } else {
    std::cout << traffic::model_text(spec, report, binary_units);
  }
  return kExitPass;
}

struct RunFlags {
  std::string out;
  std::string checkpoint = "1m";
  std::string wait;
  std::string topology;
  std::string snmp_credentials;
  std::string snmp_settle = "5s";
  std::string snmp_interval = "60s";
  std::string only_through;
  std::string from_report;
  std::string only_failing;
  RunHistoryFlags history;
  bool no_progress = false;
  std::string metrics_listen;
  std::string metrics_linger = "0s";
  MetricsSecurity metrics_security;
  bool metrics_tls = false;
};

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

// A duration flag's value; its error names the flag.
std::chrono::milliseconds duration_flag(std::string_view flag, const std::string& text) {
  try {
    return std::chrono::duration_cast<std::chrono::milliseconds>(units::parse_duration(text));
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("{}: {}", flag, e.what()));
  }
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
    if (!flags.topology.empty())
      options.topology = std::make_shared<FabricTopology>(load_topology_file(flags.topology));
    if (!flags.snmp_credentials.empty()) {
      if (!options.topology)
        throw std::invalid_argument("--snmp-credentials: give --topology too: it says which switches to read");
      options.switches =
          switch_queries(*options.topology, load_snmp_credentials_file(flags.snmp_credentials), flags.snmp_credentials);
    }
    options.switch_settle = duration_flag("--snmp-settle", flags.snmp_settle);
    options.switch_interval = duration_flag("--snmp-interval", flags.snmp_interval);
    if (options.switch_interval.count() > 0 && options.switch_interval < std::chrono::seconds(1)) {
      throw std::invalid_argument(
          "--snmp-interval: at least 1s (a switch refreshes its counters every few "
          "seconds), or 0 for none");
    }
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
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return kExitUsage;
  }
  // The run id is only known once the run starts: a default directory is checked by its parent.
  try {
    check_report_directory(flags.out.empty() ? std::string("tusk-reports") : flags.out);
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
  options.run_directory = [out = flags.out](const std::string& run_id) {
    return out.empty() ? fmt::format("tusk-reports/{}", run_id) : out;
  };
  options.checkpoint = [&options](const RunOutcome& so_far) {
    write_checkpoint(report_json(so_far), options.run_directory(so_far.run_id));
  };
  options.progress_line = !flags.no_progress && isatty(STDOUT_FILENO) == 1;

  RunOutcome outcome;
  try {
    outcome = run_profile(*profile, options);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return kExitUsage;
  }
  const std::string directory = options.run_directory(outcome.run_id);
  auto report = report_json(outcome);
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

// report.html from an earlier run: RUN_DIR/report.json (or that file named directly) drawn into
// RUN_DIR/report.html, or into --out.
int command_report(const std::string& given, const std::string& out, bool as_text) {
  namespace fs = std::filesystem;
  if (as_text && !out.empty()) {
    std::cerr << "report: --text prints the summary on stdout; --out is where the page goes: give one or the other\n";
    return kExitUsage;
  }
  std::string run;
  try {
    run = run_location(given);
  } catch (const std::exception& e) {
    std::cerr << fmt::format("report: {}\n", e.what());
    return kExitUsage;
  }
  const fs::path input = fs::is_directory(run) ? fs::path(run) / "report.json" : fs::path(run);
  std::error_code no_file;
  const bool from_series =
      fs::is_directory(run) && !fs::exists(input, no_file) && fs::exists(fs::path(run) / kSeriesFileName, no_file);
  std::ifstream file(input);
  if (!file && !from_series) {
    std::cerr << fmt::format("{}: cannot read it: {}\n", input.string(), std::strerror(errno));
    return kExitUsage;
  }
  std::string html;
  try {
    // A run that left no report.json is drawn from its series file, and says so.
    if (from_series) {
      std::cerr << fmt::format("report: {} has no report.json: drawing the run from its {}\n", run, kSeriesFileName);
    }
    const auto report = from_series ? report_json(outcome_from_series((fs::path(run) / kSeriesFileName).string()))
                                    : parse_json<nlohmann::ordered_json>(file);
    if (!report.is_object() || !report.contains("run_id") || !report.contains("tests")) {
      std::cerr << fmt::format("{}: not a Tusk report.json (no run_id or tests)\n", input.string());
      return kExitUsage;
    }
    if (as_text) {
      std::cout << report_text(report);
      return kExitPass;
    }
    html = report_html(report);
  } catch (const nlohmann::json::parse_error& e) {
    std::cerr << fmt::format("{}: not a Tusk report.json: not JSON (byte {})\n", input.string(), e.byte);
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << fmt::format("{}: {}\n", input.string(), e.what());
    return kExitUsage;
  }
  const fs::path output = out.empty() ? input.parent_path() / "report.html" : fs::path(out);
  std::ofstream page(output);
  page << html;
  page.close();
  if (!page) {
    std::cerr << fmt::format("cannot write '{}'\n", output.string());
    return kExitUsage;
  }
  std::cout << fmt::format("report: {}\n", output.string());
  return kExitPass;
}

// An agent's own --max-rate, when it said one (a peer's number: one that is no rate is none).
std::optional<double> agent_max_rate(const proto::Inventory& inventory) {
  const double rate = inventory.max_rate_bps();
  if (!std::isfinite(rate) || rate <= 0) return std::nullopt;
  return rate;
}

// "rate 100 Gbit/s, duration 24 h": what the agent holds every plan to.
std::string agent_limits_text(const proto::Inventory& inventory) {
  const auto rate = agent_max_rate(inventory);
  return fmt::format("rate {}, duration {}", rate ? units::format_bit_rate(*rate) : std::string("the plan's cap"),
                     inventory.max_duration_ms() > 0
                         ? units::format_duration(std::chrono::milliseconds(
                               std::min<std::uint64_t>(inventory.max_duration_ms(), 1'000'000'000'000)))
                         : std::string("not said"));
}

// Waits for agents and shows what they have: a check of the control plane and of each host's
// NICs before anything runs.
int command_inventory(ControlPlaneFlags& control, std::uint32_t expect, const std::string& wait_text,
                      const std::string& json_path) {
  ControlPlaneOptions options;
  std::chrono::milliseconds wait{};
  try {
    options = control.resolve();
    wait = std::chrono::duration_cast<std::chrono::milliseconds>(units::parse_duration(wait_text));
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return kExitUsage;
  }
  try {
    ControlPlane plane(options, {});
    auto& registry = plane.registry();
    const auto deadline = std::chrono::steady_clock::now() + wait;
    std::vector<std::string> names;
    while (std::chrono::steady_clock::now() < deadline) {
      names.clear();
      for (const auto& link : registry.links()) {
        if (link.connected) names.push_back(link.name);
      }
      if (names.size() >= expect) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    registry.sync_clocks(names, 8);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    nlohmann::json agents = nlohmann::json::array();
    std::cout << fmt::format("{} agent(s) registered (expected {}){}\n", names.size(), expect,
                             names.empty() ? "" : ":");
    std::vector<std::string> idle;  // registered, but with no engine: they can run no test
    for (const auto& view : registry.agents()) {
      if (!view.connected) continue;
      const auto& inventory = view.inventory;
      if (inventory.engines().empty()) idle.push_back(view.name);
      // What an agent says of itself is a peer's text: shown escaped.
      std::vector<std::string> engines;
      for (const auto& engine : inventory.engines()) engines.push_back(printable(engine));
      std::cout << fmt::format(
          "  {:<16} {:<22} clock offset {:>9.3f} ms  rtt {:>8.3f} ms  engines [{}]  RDMA devices {}\n", view.name,
          view.remote, view.clock ? view.clock->offset_ns / 1e6 : 0.0, view.clock ? view.clock->rtt_ns / 1e6 : 0.0,
          fmt::join(engines, ","), inventory.rdma_devices_size());
      std::cout << fmt::format("      limits: {}\n", agent_limits_text(inventory));
      for (const auto& device : inventory.rdma_devices()) {
        for (const auto& port : device.ports()) {
          std::cout << fmt::format("      {} port {}: {} {} MTU {} {:.0f} Gb/s, {} GIDs\n", printable(device.name()),
                                   port.port_num(), printable(port.state()), printable(port.link_layer()),
                                   port.active_mtu(), port.speed_gbps(), port.gids_size());
        }
      }
      for (const auto& note : inventory.notes()) std::cout << fmt::format("      note: {}\n", printable(note));
      agents.push_back({{"name", view.name},
                        {"hostname", inventory.hostname()},
                        {"version", inventory.agent_version()},
                        {"remote", view.remote},
                        {"clock_offset_ns", view.clock ? view.clock->offset_ns : 0},
                        {"clock_rtt_ns", view.clock ? view.clock->rtt_ns : 0},
                        {"rdma_devices", inventory.rdma_devices_size()},
                        {"max_rate_bps", agent_max_rate(inventory) ? nlohmann::json(*agent_max_rate(inventory))
                                                                   : nlohmann::json(nullptr)},
                        {"max_duration_ms", inventory.max_duration_ms()},
                        {"engines", std::vector<std::string>(inventory.engines().begin(), inventory.engines().end())},
                        {"notes", std::vector<std::string>(inventory.notes().begin(), inventory.notes().end())}});
    }
    if (!json_path.empty()) {
      std::ofstream file(json_path);
      file << json_text(nlohmann::json{{"agents", agents}}) << "\n";
      if (!file) {
        spdlog::error("cannot write '{}'", json_path);
        return kExitUsage;
      }
    }
    const std::size_t usable = names.size() - std::min(names.size(), idle.size());
    if (!idle.empty()) {
      std::cout << fmt::format("{} agent(s) can run nothing, no engine (their notes say why): {}\n", idle.size(),
                               fmt::join(idle, ", "));
    }
    if (usable < expect) {
      std::cout << fmt::format("{} of the {} expected agent(s) can run tests\n", usable, expect);
      return kExitAgentsMissing;
    }
    return kExitPass;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return kExitUsage;
  }
}

// One socket per agent: a fabric of thousands of hosts needs more descriptors than the usual
// soft limit of 1024, so take what the hard limit allows.
void raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) spdlog::warn("cannot raise the open-file limit: {}", std::strerror(errno));
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
  run->add_option("--topology", flags.topology,
                  "topology YAML: the names of devices, ports and cables, for the links a routed test blames");
  run->add_option("--snmp-credentials", flags.snmp_credentials,
                  "SNMP credentials YAML for the switches the topology gives a management address: their counters "
                  "and LLDP neighbours are read before and after each test");
  run->add_option("--snmp-settle", flags.snmp_settle,
                  "how long after a test's traffic stops its switches' counters are read (they refresh theirs "
                  "every few seconds)")
      ->capture_default_str();
  run->add_option("--snmp-interval", flags.snmp_interval,
                  "also read the switches' counters this often while a test runs, to say when loss began (0: only "
                  "before and after)")
      ->capture_default_str();
  return run;
}

}  // namespace

int controller_main(int argc, char** argv) {
  CLI::App app{
      fmt::format("tusk-controller {}: drives Tusk agents through a profile and judges the fabric", kTuskVersion),
      "tusk-controller"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_line("tusk-controller"));
  bool print_completion = false;
  app.add_flag("--bash-completion", print_completion, "print a bash completion script for tusk-controller and exit");
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn or error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();

  std::vector<std::string> validate_files;
  auto* validate = app.add_subcommand("validate", "check profiles; exit 0 when valid, 2 otherwise");
  validate->add_option("files", validate_files, "profile YAML files")->required();

  std::string plan_file;
  std::vector<std::string> plan_agents;
  bool plan_as_json = false;
  auto* plan = app.add_subcommand("plan", "print the expanded per-agent plan");
  plan->add_option("file", plan_file, "profile YAML file")->required();
  plan->add_option("--agents", plan_agents, "agent names to plan for (default: the profile's hosts)")->delimiter(',');
  plan->add_flag("--json", plan_as_json, "machine-readable output");
  std::string plan_topology;
  plan->add_option("--topology", plan_topology,
                   "topology YAML: places each agent (a host device of its name) at its leaf, for a schedule "
                   "grouped by leaf");

  std::string model_file;
  bool model_as_json = false;
  bool model_binary_units = false;
  auto* model = app.add_subcommand("model", "the network traffic of an AI training job described by a model file");
  model->add_option("file", model_file, "model YAML file (see models/)")->required();
  model->add_flag("--json", model_as_json, "machine-readable output");
  model->add_flag("--binary-units", model_binary_units, "GiB, TiB, PiB, EiB instead of GB, TB, PB, EB");

  std::string run_file;
  RunFlags run_flags;
  ControlPlaneFlags run_control;
  auto* run = add_run_command(app, run_file, run_flags, run_control);

  std::string report_run;
  std::string report_out;
  auto* report =
      app.add_subcommand("report", "draw report.html from an earlier run's report.json, or print its summary");
  report->add_option("run", report_run, "run directory (or its report.json), or a run id of the history")->required();
  report->add_option("--out", report_out, "where to write the page (default: report.html beside report.json)");
  bool report_as_text = false;
  report->add_flag("--text", report_as_text,
                   "print the run's summary (streams, verdicts, suspects, faults, result) instead of drawing the page");

  std::string series_run;
  SeriesQuery series_query;
  bool series_csv = false, series_json = false;
  auto* series = app.add_subcommand(
      "series",
      "print every sample of a run's streams from its series file, each counter as its change since the last");
  series->add_option("run", series_run, "run directory (or its series.sqlite), or a run id of the history")->required();
  series->add_option("--test", series_query.test, "one test's rows, by its index from 0");
  series->add_option("--agent", series_query.agent, "the streams this agent measured");
  series->add_option("--stream", series_query.stream, "one stream id, e.g. rx:lab-a/1");
  auto* csv_flag = series->add_flag("--csv", series_csv, "comma-separated, a column per counter and gauge");
  series->add_flag("--json", series_json, "JSON Lines: an object per row")->excludes(csv_flag);

  ControlPlaneFlags inventory_control;
  std::uint32_t expect = 1;
  std::string inventory_wait = "30s";
  std::string inventory_json;
  auto* inventory = app.add_subcommand("inventory", "wait for agents and list their hosts, NICs and clocks");
  inventory_control.add_to(*inventory);
  inventory->add_option("--expect", expect, "how many agents to wait for")->capture_default_str();
  inventory->add_option("--wait", inventory_wait, "how long to wait")->capture_default_str();
  inventory->add_option("--json", inventory_json, "also write the inventory to this file");
  inventory->footer(
      "Exit status: 0 when --expect agents registered that can run tests (each with an engine), 3 when fewer did, 2 "
      "for a usage error.");

  HistoryCommands history_commands(app);
  TopologyCommands topology_commands(app);
  ActCommand act_command(app);
  // After the subcommands, which would inherit it.
  app.footer(
      "Each command's own options: tusk-controller COMMAND --help. Shipped profiles and models: /usr/share/tusk.");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Alone, --bash-completion needs no subcommand: the missing one is no error then.
    if (!print_completion) return usage_error(app, e, argc, argv) == 0 ? kExitPass : kExitUsage;
  }
  if (print_completion) {
    std::cout << bash_completion(app, "tusk-controller");
    return kExitPass;
  }
  try {
    init_logging("tusk-controller", log_level);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return kExitUsage;
  }
  if (auto code = history_commands.run_chosen(std::cout, std::cerr)) return *code;
  if (auto code = topology_commands.run_chosen(std::cout, std::cerr)) return *code;
  if (auto code = act_command.run_chosen(std::cout, std::cerr)) return *code;
  if (*validate) return command_validate(validate_files);
  if (*plan) return command_plan(plan_file, plan_agents, plan_topology, plan_as_json);
  if (*model) return command_model(model_file, model_as_json, model_binary_units);
  if (*report) return command_report(report_run, report_out, report_as_text);
  if (*series) {
    try {
      series_run = run_location(series_run);
      const std::uint64_t rows = print_series(series_run, series_query,
                                              series_csv    ? SeriesFormat::Csv
                                              : series_json ? SeriesFormat::Json
                                                            : SeriesFormat::Table,
                                              std::cout);
      if (rows > 0) return kExitPass;
      const bool filtered = series_query.test || !series_query.agent.empty() || !series_query.stream.empty();
      std::cerr << fmt::format(
          "series: {} in {}\n",
          filtered ? fmt::format("no sample matches{}{}{}",
                                 series_query.test ? fmt::format(" --test {}", *series_query.test) : std::string(),
                                 series_query.agent.empty() ? "" : " --agent " + series_query.agent,
                                 series_query.stream.empty() ? "" : " --stream " + series_query.stream)
                   : std::string("no sample at all"),
          series_run);
      return filtered ? kExitUsage : kExitPass;
    } catch (const std::exception& e) {
      std::cerr << e.what() << "\n";
      return kExitUsage;
    }
  }
  raise_descriptor_limit();
  if (*run) return command_run(run_file, run_control, run_flags);
  if (*inventory) return command_inventory(inventory_control, expect, inventory_wait, inventory_json);
  return kExitUsage;
}

}  // namespace tusk
