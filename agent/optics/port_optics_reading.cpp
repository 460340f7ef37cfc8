#include "agent/optics/port_optics_reading.hpp"

#include <fmt/format.h>

#include <fstream>
#include <utility>

#include "agent/optics/fec_stats.hpp"
#include "agent/optics/module_diagnostics.hpp"
#include "common/command_output.hpp"
#include "common/optics_wire.hpp"
#include "common/sysfs_name.hpp"

namespace tusk::optics {
namespace {

// A full CMIS dump with every page is about 12 KiB; past this, ethtool is not printing a module.
constexpr std::size_t kMaxEthtoolPrintBytes = 256 * 1024;

// What ethtool printed on both streams, as the parsers read it; none when it could not be run at
// all (then `note` says why), so "not supported" on stderr still reads as no diagnostics.
std::optional<std::string> run_ethtool(const EthtoolSource& source, std::vector<std::string> argv, std::string& note) {
  argv.insert(argv.begin(), source.program);
  const CommandOutput output = run_command(argv, source.timeout, kMaxEthtoolPrintBytes);
  if (!output.spawn_error.empty() || output.timed_out) {
    if (!note.empty()) note += "; ";
    note += output.failure(source.program);
    return std::nullopt;
  }
  return output.out + "\n" + output.err;
}

std::optional<std::uint64_t> read_sysfs_number(const std::filesystem::path& file) {
  std::ifstream in(file);
  long long value = -1;
  if (!(in >> value) || value < 0) return std::nullopt;
  return static_cast<std::uint64_t>(value);
}

std::filesystem::path netdev_dir(const EthtoolSource& source, const std::string& netdev) {
  return source.sysfs_root / "class" / "net" / netdev;
}

// Whether the name can be handed to ethtool and joined to a sysfs path as it is: one path
// component, and not something ethtool would read as an option.
bool usable_netdev(const std::string& netdev) {
  return is_one_path_component(netdev) && netdev.front() != '-';
}

std::optional<proto::FecStats> read_fec(const EthtoolSource& source, const std::string& netdev, std::string& note) {
  const auto printed = run_ethtool(source, {"--include-statistics", "--show-fec", netdev}, note);
  if (!printed) return std::nullopt;
  proto::FecStats stats;
  to_proto(parse_fec_stats(*printed), stats);
  return stats;
}

}  // namespace

PortOpticsReading::Counters PortOpticsReading::read_counters(const KernelPort& port) const {
  Counters counters;
  if (!usable_netdev(port.netdev)) {
    counters.note = fmt::format("netdev name '{}' not read", port.netdev);
  } else {
    counters.rx_bytes = read_sysfs_number(netdev_dir(source_, port.netdev) / "statistics" / "rx_bytes");
    counters.fec = read_fec(source_, port.netdev, counters.note);
  }
  counters.at = std::chrono::steady_clock::now();
  return counters;
}

std::pair<PortOpticsReading::Counters, std::optional<proto::ModuleDiagnostics>> PortOpticsReading::read_now(
    const KernelPort& port) const {
  Counters counters = read_counters(port);
  std::optional<proto::ModuleDiagnostics> module;
  if (usable_netdev(port.netdev)) {
    if (const auto printed = run_ethtool(source_, {"-m", port.netdev}, counters.note)) {
      to_proto(parse_module_diagnostics(*printed), module.emplace());
    }
  }
  return {std::move(counters), std::move(module)};
}

proto::PortOptics PortOpticsReading::between(const KernelPort& port, const Counters& from, const Counters& to,
                                             const std::optional<proto::ModuleDiagnostics>& module) const {
  proto::PortOptics out;
  out.set_port(port.port);
  out.set_netdev(port.netdev);
  out.set_address(port.address);
  std::string note = from.note;
  if (!to.note.empty() && to.note != note) note += (note.empty() ? "" : "; ") + to.note;
  if (from.fec && to.fec) *out.mutable_fec_before() = *from.fec;
  if (to.fec) *out.mutable_fec_after() = *to.fec;
  if (from.rx_bytes && to.rx_bytes && *to.rx_bytes >= *from.rx_bytes) out.set_rx_bytes(*to.rx_bytes - *from.rx_bytes);
  out.set_interval_ns(
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(to.at - from.at).count()));
  if (usable_netdev(port.netdev)) {
    // The kernel reports -1, or refuses the read, when it does not know the speed (a link down, veth).
    const auto speed = read_sysfs_number(netdev_dir(source_, port.netdev) / "speed");
    if (speed && *speed <= 10'000'000) out.set_speed_mbps(static_cast<std::uint32_t>(*speed));
  }
  if (module) *out.mutable_module() = *module;
  out.set_note(std::move(note));
  return out;
}

PortOpticsReading::PortOpticsReading(EthtoolSource source, std::vector<KernelPort> ports) : source_(std::move(source)) {
  for (auto& kernel : ports) {
    Port port;
    port.kernel = std::move(kernel);
    port.start = read_counters(port.kernel);
    ports_.push_back(std::move(port));
  }
}

std::vector<proto::PortOptics> PortOpticsReading::interval() {
  std::vector<proto::PortOptics> result;
  result.reserve(ports_.size());
  for (auto& port : ports_) {
    auto [now, module] = read_now(port.kernel);
    result.push_back(between(port.kernel, port.last ? *port.last : port.start, now, module));
    port.last = std::move(now);
  }
  return result;
}

PortOpticsReading::Finished PortOpticsReading::finish() {
  Finished finished;
  finished.whole.reserve(ports_.size());
  for (auto& port : ports_) {
    const auto [now, module] = read_now(port.kernel);
    finished.whole.push_back(between(port.kernel, port.start, now, module));
    if (port.last) finished.last_interval.push_back(between(port.kernel, *port.last, now, module));
  }
  return finished;
}

}  // namespace tusk::optics
