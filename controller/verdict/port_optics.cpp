#include "controller/verdict/port_optics.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "common/optics_wire.hpp"
#include "common/printable.hpp"

namespace tusk {
namespace {

// An agent's names are short; past this they are not a port's name.
constexpr std::size_t kMaxPortNameBytes = 128;

// 1.6 Tb/s and more, with room: past this the speed is not a port's.
constexpr std::uint32_t kMaxSpeedMbps = 10'000'000;

// Arrived printable (controller/run/peer_texts.hpp); cut on a character to a port name's length.
std::string bounded_name(const std::string& text) {
  return cut_utf8(text, kMaxPortNameBytes);
}

std::uint64_t bits_over(std::uint32_t speed_mbps, std::uint64_t interval_ns) {
  const double bits = static_cast<double>(speed_mbps) * 1e6 * (static_cast<double>(interval_ns) / 1e9);
  if (!(bits < static_cast<double>(std::numeric_limits<std::uint64_t>::max()))) return 0;
  return static_cast<std::uint64_t>(bits);
}

}  // namespace

OpticsThresholds optics_thresholds(const OpticsSettings& settings) {
  OpticsThresholds result = settings.preset == OpticsPreset::field_ber ? field_ber_preset() : OpticsThresholds{};
  const OpticsThresholds& own = settings.thresholds;
  for (auto member : {&OpticsThresholds::max_pre_fec_ber, &OpticsThresholds::warn_pre_fec_ber,
                      &OpticsThresholds::max_symbol_ber, &OpticsThresholds::warn_symbol_ber,
                      &OpticsThresholds::min_rx_power_dbm, &OpticsThresholds::max_module_temp_c}) {
    if (own.*member) result.*member = own.*member;
  }
  return result;
}

PortOpticsOutcome judge_port_optics(const std::string& agent, const proto::PortOptics& reported,
                                    const OpticsThresholds& thresholds) {
  PortOpticsOutcome port;
  port.agent = agent;
  port.port = bounded_name(reported.port());
  port.netdev = bounded_name(reported.netdev());
  port.note = bounded_name(reported.note());
  port.address = bounded_name(reported.address());
  if (reported.has_module()) port.module = module_from_proto(reported.module());
  std::optional<FecReading> before;
  if (reported.has_fec_before()) before = fec_from_proto(reported.fec_before());
  if (reported.has_fec_after()) port.fec = fec_from_proto(reported.fec_after());
  const std::uint64_t interval_ns = std::min(reported.interval_ns(), kMaxOpticsIntervalNs);
  const std::uint32_t speed_mbps = reported.speed_mbps() <= kMaxSpeedMbps ? reported.speed_mbps() : 0;
  if (speed_mbps > 0 && interval_ns > 0) {
    port.bits_carried = bits_over(speed_mbps, interval_ns);
    port.bits_from_line_rate = port.bits_carried > 0;
  }
  if (!port.bits_from_line_rate) {
    port.bits_carried =
        reported.rx_bytes() <= std::numeric_limits<std::uint64_t>::max() / 8 ? reported.rx_bytes() * 8 : 0;
  }
  OpticsPortReadings readings;
  readings.port = port_optics_title(port);
  readings.module = port.module;
  readings.fec_before = std::move(before);
  readings.fec_after = port.fec;
  readings.bits_carried = port.bits_carried;
  port.verdict = judge_optics(readings, thresholds);
  return port;
}

std::string optics_summary_text(const std::vector<PortOpticsOutcome>& ports) {
  std::size_t diagnostics = 0, fec = 0, warned = 0;
  std::vector<std::string> failing;
  for (const auto& port : ports) {
    if (port.module && port.module->status == ModuleStatus::diagnostics) ++diagnostics;
    if (port.fec && port.fec->status == FecStatus::statistics) ++fec;
    if (port.verdict.failed()) {
      failing.push_back(port_optics_title(port));
    } else if (!port.verdict.findings.empty()) {
      ++warned;
    }
  }
  constexpr std::size_t kNamed = 5;
  std::string text = fmt::format("optics: {} port{} read, {} with module diagnostics, {} with FEC counters",
                                 ports.size(), ports.size() == 1 ? "" : "s", diagnostics, fec);
  if (!failing.empty()) {
    text += fmt::format("; {} failing (", failing.size());
    for (std::size_t i = 0; i < failing.size() && i < kNamed; ++i) {
      if (i > 0) text += ", ";
      text += failing[i];
    }
    text += failing.size() > kNamed ? ", ...)" : ")";
  }
  if (warned > 0) text += fmt::format("; {} with warnings", warned);
  return text;
}

void place_port_optics(PortOpticsOutcome& port, const FabricTopology& topology) {
  if (port.address.empty()) return;
  const auto place = topology.find(port.address);
  if (!place || place->interface.empty()) return;
  for (const auto& link : topology.links()) {
    const bool at_a = link.a.device == place->device && link.a.interface == place->interface;
    const bool at_b = link.b.device == place->device && link.b.interface == place->interface;
    if (!at_a && !at_b) continue;
    port.end = (at_a ? link.a : link.b).text();
    port.far_end = (at_a ? link.b : link.a).text();
    port.cable = link.cable;
    return;
  }
}

std::string port_optics_title(const PortOpticsOutcome& port) {
  if (port.netdev.empty() || port.netdev == port.port) return fmt::format("{} {}", port.agent, port.port);
  return fmt::format("{} {} ({})", port.agent, port.netdev, port.port);
}

}  // namespace tusk
