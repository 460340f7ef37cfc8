#include "controller/inventory_command.hpp"

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
#include "common/check_share.hpp"
#include "common/cli_completion.hpp"
#include "common/cli_suggestion.hpp"
#include "common/json_text.hpp"
#include "common/logging.hpp"
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
#include "controller/plan/check_loads.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/report/plan_printer.hpp"
#include "controller/report/report_text.hpp"
#include "controller/report/reports.hpp"
#include "controller/run/run_orchestrator.hpp"
#include "controller/series/series_file.hpp"
#include "controller/series/series_outcome.hpp"
#include "controller/series/series_reader.hpp"
#include "controller/switches/snmp_credentials.hpp"
#include "controller/switches/switch_queries.hpp"
#include "controller/switches/topology_commands.hpp"

#include "controller/command_flags.hpp"

namespace tusk {
namespace {

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

// "RDMA 41.2 GB/s of 4096 B messages, ...; DPDK 60.1 GB/s of 1500 B frames": what the agent measured of
// one of its cores (a peer's numbers: any that are not rates are left out).
std::string check_rates_text(const proto::CheckRates& rates) {
  std::vector<std::string> parts;
  const int count = std::min(rates.rdma_size(), kMaxCheckRates);
  for (int i = 0; i < count; ++i) {
    const auto& rate = rates.rdma(i);
    if (std::isfinite(rate.bytes_per_s()) && rate.bytes_per_s() > 0) {
      parts.push_back(fmt::format("RDMA {:.1f} GB/s of {} B messages", rate.bytes_per_s() / 1e9, rate.message_size()));
    }
  }
  if (const double dpdk = rates.dpdk_frame_bytes_per_s(); std::isfinite(dpdk) && dpdk > 0) {
    parts.push_back(fmt::format("DPDK {:.1f} GB/s of 1500 B frames' PRBS", dpdk / 1e9));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

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
      // What an agent says of itself arrived escaped (controller/run/peer_texts.hpp).
      const std::vector<std::string> engines(inventory.engines().begin(), inventory.engines().end());
      std::cout << fmt::format(
          "  {:<16} {:<22} clock offset {:>9.3f} ms  rtt {:>8.3f} ms  engines [{}]  RDMA devices {}\n", view.name,
          view.remote, view.clock ? view.clock->offset_ns / 1e6 : 0.0, view.clock ? view.clock->rtt_ns / 1e6 : 0.0,
          fmt::join(engines, ","), inventory.rdma_devices_size());
      std::cout << fmt::format("      limits: {}\n", agent_limits_text(inventory));
      for (const auto& device : inventory.rdma_devices()) {
        for (const auto& port : device.ports()) {
          std::cout << fmt::format("      {} port {}: {} {} MTU {} {:.0f} Gb/s, {} GIDs\n", device.name(),
                                   port.port_num(), port.state(), port.link_layer(), port.active_mtu(),
                                   port.speed_gbps(), port.gids_size());
        }
      }
      if (const std::string rates = check_rates_text(inventory.check_rates()); !rates.empty()) {
        std::cout << fmt::format("      one core checks: {}\n", rates);
      }
      for (const auto& note : inventory.notes()) std::cout << fmt::format("      note: {}\n", note);
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
                        {"notes", std::vector<std::string>(inventory.notes().begin(), inventory.notes().end())},
                        {"texts_cut", view.texts_cut},
                        {"texts_escaped", view.texts_escaped},
                        {"inventory", inventory_file_json(inventory)}});
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

}  // namespace tusk
