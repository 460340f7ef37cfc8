#include "agent/agent_app.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <random>

#include "agent/config_file.hpp"
#include "agent/controller_link.hpp"
#include "agent/inventory.hpp"
#include "agent/lease_watchdog.hpp"
#include "agent/option_checks.hpp"
#include "agent/plan_runner.hpp"
#include "agent/record_outbox.hpp"
#include "common/build_info.hpp"
#include "common/cli_completion.hpp"
#include "common/cli_suggestion.hpp"
#include "common/clock.hpp"
#include "common/endpoint.hpp"
#include "common/exit_codes.hpp"
#include "common/logging.hpp"
#include "common/printable.hpp"
#include "common/tls.hpp"
#include "common/units.hpp"
#include "common/version.hpp"

namespace tusk {
namespace asio = boost::asio;

namespace {

struct AgentOptions {
  std::string name;
  std::string controller = "127.0.0.1:7420";
  bool insecure = false;
  TlsFiles tls;
  std::vector<std::string> dpdk_ports;
  lldp::LldpcliSource lldp;
  optics::EthtoolSource ethtool;
  std::size_t outbox_capacity = 200'000;
  std::size_t send_queue_bytes = 64u << 20;
  std::string log_level = "info";
  AgentLimits limits;
};

constexpr std::size_t kRecordsPerBatch = 256;
constexpr std::size_t kBatchBytes = 1u << 20;
// A record the controller could not take in one frame would never be acknowledged.
constexpr std::size_t kMaxRecordBytes = framing::kDefaultMaxFrame - (64u << 10);

// The controller acknowledges every batch it stores, so a few batches in flight keep the pipe
// full; a quarter of the send queue leaves room for heartbeats and clock echoes beside them.
std::size_t records_window_bytes(std::size_t send_queue_bytes) {
  return std::min<std::size_t>(4 * kBatchBytes, send_queue_bytes / 4);
}
constexpr std::chrono::milliseconds kDefaultLease{3000};
constexpr std::chrono::seconds kLldpFreshFor{5};

// The inventory with this agent's own limits, which the controller shows before any plan is refused.
proto::Inventory with_limits(proto::Inventory inventory, const AgentLimits& limits) {
  inventory.set_max_rate_bps(limits.max_rate_bps);
  inventory.set_max_duration_ms(static_cast<std::uint64_t>(limits.max_duration.count()));
  return inventory;
}

// Everything one agent process does, on one io thread.
class Agent {
 public:
  Agent(asio::io_context& io, AgentOptions options, EngineCatalog engines, asio::ssl::context* tls)
      : options_(std::move(options)),
        engines_(std::move(engines)),
        inventory_(with_limits(collect_inventory(options_.name, options_.dpdk_ports, engines_, options_.lldp),
                               options_.limits)),
        instance_(std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32)),
        outbox_(options_.outbox_capacity, records_window_bytes(options_.send_queue_bytes)),
        runner_(
            io.get_executor(), engines_, [this](proto::Record record) { add_record(std::move(record)); },
            options_.limits, options_.ethtool),
        lease_(io.get_executor(), kDefaultLease, [this] { on_lease_expired(); }),
        heartbeat_timer_(io),
        link_(io, parse_host_port(options_.controller), tls, options_.send_queue_bytes,
              {[this] { on_connected(); }, [this](proto::Envelope& message) { on_message(message); },
               [this](const std::string& reason) { on_disconnected(reason); }}) {
    for (const auto& note : inventory_.notes()) spdlog::warn("{}", note);
    spdlog::info("agent '{}' (Tusk {}), engines: {}", options_.name, kTuskVersion,
                 inventory_.engines().empty() ? "none" : fmt::format("{}", fmt::join(inventory_.engines(), ", ")));
  }

  void start() { link_.start(); }

  void shutdown() {
    runner_.stop_now(proto::AgentEvent::NOTICE, "agent shutting down");
    flush_records();
    lease_.cancel();
    heartbeat_timer_.cancel();
    link_.shutdown();
  }

 private:
  void on_connected() {
    // Not yet a session: the TLS handshake may still fail (said as a warning), "registered" is success.
    spdlog::debug("TCP connection to controller {} made; TLS handshake and hello under way", options_.controller);
    proto::Envelope envelope;
    auto* hello = envelope.mutable_hello();
    hello->set_protocol_version(kProtocolVersion);
    hello->set_agent_name(options_.name);
    // What each port is cabled to now, not when the agent started: a cable may have moved since.
    // lldpd need not be asked again right after the inventory was collected (an agent's start).
    const bool ask_lldpd = std::chrono::steady_clock::now() - lldp_read_at_ > kLldpFreshFor;
    refresh_lldp_neighbours(inventory_, ask_lldpd ? &options_.lldp : nullptr, engines_, nullptr);
    if (ask_lldpd) lldp_read_at_ = std::chrono::steady_clock::now();
    *hello->mutable_inventory() = inventory_;
    *hello->mutable_state() = runner_.state();
    hello->mutable_state()->set_last_record_seq(outbox_.last_seq());
    hello->mutable_state()->set_first_unacked_seq(outbox_.first_unacked_seq());
    hello->set_agent_instance(instance_);
    link_.send(envelope);
  }

  void on_message(proto::Envelope& message) {
    const std::int64_t received_ns = realtime_ns();
    lease_.renew();
    switch (message.body_case()) {
      case proto::Envelope::kHelloAck:
        on_hello_ack(message.hello_ack());
        break;
      case proto::Envelope::kHeartbeat:
        break;
      case proto::Envelope::kClockProbe: {
        proto::Envelope reply;
        auto* echo = reply.mutable_clock_echo();
        echo->set_probe_id(message.clock_probe().probe_id());
        echo->set_controller_send_ns(message.clock_probe().controller_send_ns());
        echo->set_agent_receive_ns(received_ns);
        echo->set_agent_send_ns(realtime_ns());
        link_.send(reply);
        break;
      }
      case proto::Envelope::kPlan:
        // Answered once the engine is ready, which for RDMA is after its QPs connected.
        runner_.on_plan(message.plan(), [this](proto::PlanAck ack) {
          if (!ack.ok()) spdlog::error("plan refused: {}", ack.error());
          proto::Envelope reply;
          *reply.mutable_plan_ack() = std::move(ack);
          link_.send(reply);
        });
        break;
      case proto::Envelope::kStartAt:
        runner_.on_start_at(message.start_at());
        break;
      case proto::Envelope::kStop:
        runner_.on_stop(message.stop());
        break;
      case proto::Envelope::kRecordAck:
        outbox_.acknowledge(message.record_ack().acked_through());
        flush_records();
        break;
      case proto::Envelope::kError:
        spdlog::error("controller refused us: {}", message.error().message());
        break;
      default:
        spdlog::warn("unexpected message {} from the controller, ignored", static_cast<int>(message.body_case()));
    }
  }

  void on_hello_ack(const proto::HelloAck& ack) {
    // Everything unacknowledged goes out again, in order, before any record made from here on
    // (CONTROLLER_BACK below is one): a record flushed first would reach the controller ahead of
    // older ones and read there as a gap.
    outbox_.rewind();
    session_up_ = true;
    link_.session_established();
    lease_.set_lease(bounded_lease(ack.lease_ms(), lease_.lease(), options_.limits));
    if (lease_.lease() != std::chrono::milliseconds(ack.lease_ms()) && ack.lease_ms() > 0) {
      spdlog::warn("controller asked for a {} ms lease; this agent holds it to {} ms (--max-lease)", ack.lease_ms(),
                   lease_.lease().count());
    }
    heartbeat_interval_ = bounded_heartbeat(ack.heartbeat_interval_ms(), lease_.lease());
    lease_.renew();
    spdlog::info("registered with controller '{}' (lease {} ms); {} records to resend", ack.controller_name(),
                 lease_.lease().count(), outbox_.pending());
    if (lost_at_ns_ != 0 && runner_.traffic_running()) {
      runner_.emit_event(proto::AgentEvent::CONTROLLER_BACK, fmt::format("controller connection restored after {} ms",
                                                                         (realtime_ns() - lost_at_ns_) / 1'000'000));
    }
    lost_at_ns_ = 0;
    flush_records();
    send_heartbeats();
  }

  void on_disconnected(const std::string& reason) {
    const bool was_up = session_up_;
    session_up_ = false;
    heartbeat_timer_.cancel();
    outbox_.rewind();     // nothing is in flight on a connection that is gone
    if (!was_up) return;  // the link has said why
    spdlog::warn("lost the controller: {}", reason);
    lost_at_ns_ = realtime_ns();
    if (runner_.traffic_running()) {
      runner_.emit_event(proto::AgentEvent::CONTROLLER_LOST, fmt::format("controller connection lost: {}", reason));
    }
  }

  void on_lease_expired() {
    const auto message = fmt::format("no word from the controller for {} ms: traffic stopped", lease_.lease().count());
    if (runner_.traffic_running()) spdlog::error("{}", message);
    runner_.stop_now(proto::AgentEvent::LEASE_EXPIRED, message);
    link_.drop("lease expired");
  }

  void send_heartbeats() {
    if (!session_up_) return;
    // Records and echoes tell the controller we are alive as well as a heartbeat does (at 4,096
    // agents a heartbeat beside every sample doubles the controller's work), so only a link we
    // have been quiet on for a whole interval gets one. Checked twice an interval: the longest
    // silence is one and a half intervals, half the lease, far inside the controller's two leases.
    if (!link_.sent_within(heartbeat_interval_)) {
      proto::Envelope envelope;
      envelope.mutable_heartbeat()->set_sender_time_ns(realtime_ns());
      link_.send(envelope);
    }
    heartbeat_timer_.expires_after(heartbeat_interval_ / 2);
    heartbeat_timer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) send_heartbeats();
    });
  }

  void add_record(proto::Record record) {
    if (const std::size_t bytes = record.ByteSizeLong(); bytes > kMaxRecordBytes) {
      const auto what = fmt::format("a {} record of {} bytes is larger than a control frame may be; dropped",
                                    record.has_sample() ? "sample" : "result", bytes);
      spdlog::error("{}", what);
      proto::Record event;
      event.mutable_event()->set_kind(proto::AgentEvent::ENGINE_FAULT);
      event.mutable_event()->set_agent_time_ns(realtime_ns());
      event.mutable_event()->set_message(what);
      record = std::move(event);
    }
    const auto dropped_before = outbox_.dropped();
    outbox_.add(std::move(record));
    if (outbox_.dropped() != dropped_before && !reported_overflow_) {
      reported_overflow_ = true;  // one event per overflow episode, not one per dropped record
      spdlog::error("telemetry buffer full ({} records unacknowledged): dropping the oldest", outbox_.pending());
    }
    flush_records();
  }

  void flush_records() {
    if (!session_up_) return;
    proto::Envelope envelope;
    while (outbox_.take_unsent(*envelope.mutable_records(), kRecordsPerBatch, kBatchBytes)) link_.send(envelope);
    if (reported_overflow_ && outbox_.pending() < options_.outbox_capacity / 2) {
      reported_overflow_ = false;
      runner_.emit_event(
          proto::AgentEvent::TELEMETRY_OVERFLOW,
          fmt::format("{} telemetry records were dropped while the controller was unreachable", outbox_.dropped()));
    }
  }

  AgentOptions options_;
  EngineCatalog engines_;
  proto::Inventory inventory_;
  std::chrono::steady_clock::time_point lldp_read_at_ = std::chrono::steady_clock::now();
  std::uint64_t instance_;
  RecordOutbox outbox_;
  PlanRunner runner_;
  LeaseWatchdog lease_;
  asio::steady_timer heartbeat_timer_;
  std::chrono::milliseconds heartbeat_interval_{1000};
  ControllerLink link_;
  bool session_up_ = false;
  bool reported_overflow_ = false;
  std::int64_t lost_at_ns_ = 0;
};

// The file's sections are these option groups; the rest of the options sit at its top level.
const ConfigFileLayout kConfigLayout{{"TLS", "DPDK", "RDMA", "Limits"},
                                     {"--config", "--check-config", "--bash-completion", "--version"},
                                     {"--ca", "--cert", "--key", "--lldpcli-socket"}};

std::string default_agent_name() {
  char host[256] = {};
  return gethostname(host, sizeof(host) - 1) == 0 ? std::string(host) : std::string("agent");
}

// The TLS flags an agent without --insecure lacks, said with where each can come from; nothing when
// none is missing.
std::optional<std::string> missing_tls_flags(const AgentOptions& options) {
  if (options.insecure) return std::nullopt;
  std::vector<std::string> missing;
  if (options.tls.ca_file.empty()) missing.push_back("--ca (tls: ca:)");
  if (options.tls.cert_file.empty()) missing.push_back("--cert (tls: cert:)");
  if (options.tls.key_file.empty()) missing.push_back("--key (tls: key:)");
  if (missing.empty()) return std::nullopt;
  return fmt::format(
      "no {} given: mutual TLS needs the CA that signs the controller's certificate and this agent's "
      "certificate and key (scripts/make-certs.sh makes a lab set), or --insecure for a plaintext lab "
      "control plane",
      fmt::join(missing, ", "));
}

// Everything --check-config can check on this host without starting: the controller's address,
// the certificates and their CN against the agent's name, and what the engines' options name.
std::vector<std::string> configuration_problems(const AgentOptions& options, const EngineSetup& setup) {
  std::vector<std::string> problems;
  try {
    parse_host_port(options.controller);
  } catch (const std::exception& e) {
    problems.push_back(fmt::format("--controller: {}", e.what()));
  }
  if (const auto missing = missing_tls_flags(options)) {
    problems.push_back(*missing);
  } else if (!options.insecure) {
    try {
      make_tls_context(options.tls, TlsRole::Agent);
      // The controller takes an agent's name from its certificate and refuses one that says another.
      const std::string common_name = certificate_common_name(options.tls.cert_file);
      if (common_name != options.name) {
        problems.push_back(
            fmt::format("--name '{}' is not the CN of its certificate '{}' ({}): the controller refuses "
                        "that agent; use --name {} or a certificate made for {}",
                        options.name, options.tls.cert_file, common_name, common_name, options.name));
      }
    } catch (const std::exception& e) {
      problems.push_back(e.what());
    }
  }
  if (setup.check_host) {
    for (auto& problem : setup.check_host()) problems.push_back(std::move(problem));
  }
  return problems;
}

// The agent itself, from TLS set-up to SIGINT or SIGTERM: 0 then, 2 when it cannot start.
int run_until_signalled(const AgentOptions& options, const EngineSetup& setup) {
  try {
    init_logging("tusk-agent", options.log_level);
    std::optional<asio::ssl::context> tls;
    if (const auto missing = missing_tls_flags(options)) throw std::invalid_argument(*missing);
    if (options.insecure) {
      spdlog::warn("--insecure: the control connection is plaintext and unauthenticated{}",
                   options.tls.ca_file.empty() && options.tls.cert_file.empty() && options.tls.key_file.empty()
                       ? ""
                       : "; the certificates given (tls: ca, cert, key) are not used");
    } else {
      tls.emplace(make_tls_context(options.tls, TlsRole::Agent));
      if (const auto common_name = certificate_common_name(options.tls.cert_file); common_name != options.name) {
        spdlog::warn("agent name '{}' is not its certificate's CN '{}': the controller will refuse it (--name {}?)",
                     options.name, common_name, common_name);
      }
    }
    EngineCatalog engines = setup.make_engines ? setup.make_engines(options.name) : EngineCatalog{};
    asio::io_context io;
    Agent agent(io, options, std::move(engines), tls ? &*tls : nullptr);
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int signal) {
      if (ec) return;
      spdlog::info("signal {}: stopping", signal);
      agent.shutdown();
      io.stop();
    });
    agent.start();
    io.run();
    return 0;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return kExitUsage;
  }
}

// --check-config: the options and the file checked, the certificates loaded, nothing started.
int check_configuration(const AgentOptions& options, const EngineSetup& setup, const std::string& config_file) {
  const auto problems = configuration_problems(options, setup);
  for (const auto& problem : problems) std::fprintf(stderr, "tusk-agent: %s\n", printable(problem).c_str());
  if (!problems.empty()) return kExitUsage;
  if (const auto why = setup.no_engine ? setup.no_engine() : std::nullopt) {
    std::fprintf(stderr, "tusk-agent: %s\n", why->c_str());
    std::printf("tusk-agent: %s: valid, but this host can run no test (agent %s, controller %s)\n",
                config_file.empty() ? "options" : config_file.c_str(), options.name.c_str(),
                options.controller.c_str());
    return 1;
  }
  std::printf("tusk-agent: %s: ok (agent %s, controller %s)\n", config_file.empty() ? "options" : config_file.c_str(),
              options.name.c_str(), options.controller.c_str());
  return 0;
}

}  // namespace

int run_agent(int argc, char** argv, const EngineSetup& setup) {
  AgentOptions options;
  options.name = default_agent_name();
  CLI::App app{"tusk-agent: runs Tusk's traffic engines on this host for a tusk-controller", "tusk-agent"};
  app.footer(
      "Every option can also be set in the --config file (YAML): a DPDK or RDMA option under dpdk: or rdma: without "
      "its prefix, TLS and Limits options under tls: and limits:, the rest at the top; '-' in a flag is '_' in a key. "
      "A flag on the command line wins over the file.\nExit status: 0 after SIGINT/SIGTERM, 2 for a bad option, "
      "configuration or certificate.");
  app.set_version_flag("--version", version_line("tusk-agent"));
  std::string config_file;
  bool check_config = false;
  bool print_completion = false;
  app.add_option("--config", config_file, "configuration file, e.g. /etc/tusk/agent.yaml")->check(CLI::ExistingFile);
  app.add_flag("--check-config", check_config,
               "check the options and configuration file (and load the certificates), then exit without starting: 0 "
               "ok, 1 valid but this host can run no test (no DPDK port named, no RDMA device), 2 a problem");
  app.add_flag("--bash-completion", print_completion, "print a bash completion script for tusk-agent and exit");
  app.add_option("--controller", options.controller, "controller address, host:port")
      ->capture_default_str()
      ->group("Agent");
  app.add_option("--name", options.name, "agent name; must equal the CN of its certificate (default: the host name)")
      ->group("Agent");
  app.add_option("--outbox", options.outbox_capacity, "records kept while the controller is unreachable")
      ->check(CLI::Range(std::size_t{1000}, std::size_t{100'000'000}))
      ->capture_default_str()
      ->group("Agent");
  app.add_option("--log-level", options.log_level, "trace, debug, info, warn or error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str()
      ->group("Agent");
  std::string send_queue = "64MiB";
  app.add_option("--send-queue", send_queue,
                 "bytes waiting to reach the controller before the connection is dropped as stuck (at least 64KiB)")
      ->check(parsed_by("SIZE",
                        [](const std::string& text) {
                          if (units::parse_size(text) < (64u << 10))
                            throw std::invalid_argument("must be at least 64KiB");
                        }))
      ->capture_default_str()
      ->group("Agent");
  app.add_option("--ca", options.tls.ca_file, "CA certificate (PEM) that signed the controller's certificate")
      ->group("TLS");
  app.add_option("--cert", options.tls.cert_file, "this agent's certificate (PEM)")->group("TLS");
  app.add_option("--key", options.tls.key_file, "this agent's private key (PEM)")->group("TLS");
  app.add_flag("--insecure", options.insecure, "plaintext control connection, no authentication (labs only)")
      ->group("TLS");
  app.add_option("--lldpcli-socket", options.lldp.socket,
                 "lldpd's control socket, to ask it the LLDP neighbour of each port the kernel also sees (default: "
                 "lldpd's own)")
      ->group("Agent");
  app.add_option("--ethtool", options.ethtool.program,
                 "the ethtool program that reads the optics (ethtool -m) and FEC counters of the ports a test uses, "
                 "when its profile asks for them")
      ->capture_default_str()
      ->group("Agent");
  app.add_option("--dpdk-port", options.dpdk_ports, "DPDK port (PCI address or vdev) this agent may use; repeatable")
      ->group("DPDK");
  // This agent's own limits, whatever a controller asks for.
  std::string max_rate = "0", max_duration = "24h", max_lease = "30s";
  app.add_option("--max-rate", max_rate,
                 "refuse plans that would send faster than this (e.g. 100Gbps; 0: the plan's cap)")
      ->check(parsed_by("RATE",
                        [](const std::string& text) {
                          if (text != "0") units::parse_bit_rate(text);
                        }))
      ->capture_default_str()
      ->group("Limits");
  app.add_option("--max-duration", max_duration, "refuse tests longer than this")
      ->check(parsed_by("DURATION", [](const std::string& text) { units::parse_duration(text); }))
      ->capture_default_str()
      ->group("Limits");
  app.add_option("--max-lease", max_lease, "stop traffic at most this long after the controller goes quiet")
      ->check(parsed_by("DURATION",
                        [](const std::string& text) {
                          if (units::parse_duration(text) < kMinLease)
                            throw std::invalid_argument("must be at least 300ms");
                        }))
      ->capture_default_str()
      ->group("Limits");
  if (setup.add_options) setup.add_options(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e, argc, argv) == 0 ? kExitPass : kExitUsage;
  }
  if (print_completion) {
    std::fputs(bash_completion(app, "tusk-agent").c_str(), stdout);
    return 0;
  }
  if (!config_file.empty()) {
    const auto errors = apply_config_file(app, config_file, kConfigLayout);
    if (!errors.empty()) {
      std::fprintf(stderr, "%s\n", join_errors(errors).c_str());
      return kExitUsage;
    }
  }
  options.limits.max_rate_bps = max_rate == "0" ? 0 : units::parse_bit_rate(max_rate);
  options.limits.max_duration =
      std::chrono::duration_cast<std::chrono::milliseconds>(units::parse_duration(max_duration));
  options.limits.max_lease = std::chrono::duration_cast<std::chrono::milliseconds>(units::parse_duration(max_lease));
  options.send_queue_bytes = units::parse_size(send_queue);

  if (check_config) return check_configuration(options, setup, config_file);

  return run_until_signalled(options, setup);
}

}  // namespace tusk
