#include "agent/optics/port_optics_reading.hpp"

#include <fmt/format.h>

#include <fstream>
#include <utility>

#include "agent/optics/fec_stats.hpp"
#include "agent/optics/module_diagnostics.hpp"
#include "agent/sysfs_name.hpp"
#include "common/command_output.hpp"
#include "common/optics_wire.hpp"

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

PortOpticsReading::PortOpticsReading(EthtoolSource source, std::vector<KernelPort> ports) : source_(std::move(source)) {
  for (auto& port : ports) {
    PortStart start;
    start.port = std::move(port);
    if (!usable_netdev(start.port.netdev)) {
      start.note = fmt::format("netdev name '{}' not read", start.port.netdev);
    } else {
      start.rx_bytes = read_sysfs_number(netdev_dir(source_, start.port.netdev) / "statistics" / "rx_bytes");
      start.fec = read_fec(source_, start.port.netdev, start.note);
    }
    start.at = std::chrono::steady_clock::now();
    starts_.push_back(std::move(start));
  }
}

std::vector<proto::PortOptics> PortOpticsReading::finish() {
  std::vector<proto::PortOptics> result;
  result.reserve(starts_.size());
  for (auto& start : starts_) {
    proto::PortOptics& out = result.emplace_back();
    out.set_port(start.port.port);
    out.set_netdev(start.port.netdev);
    out.set_address(start.port.address);
    std::string note = std::move(start.note);
    if (usable_netdev(start.port.netdev)) {
      const auto dir = netdev_dir(source_, start.port.netdev);
      const auto rx_bytes = read_sysfs_number(dir / "statistics" / "rx_bytes");
      auto fec_after = read_fec(source_, start.port.netdev, note);
      const auto at = std::chrono::steady_clock::now();
      if (start.fec && fec_after) {
        *out.mutable_fec_before() = std::move(*start.fec);
        *out.mutable_fec_after() = std::move(*fec_after);
      } else if (fec_after) {
        *out.mutable_fec_after() = std::move(*fec_after);
      }
      if (start.rx_bytes && rx_bytes && *rx_bytes >= *start.rx_bytes) out.set_rx_bytes(*rx_bytes - *start.rx_bytes);
      out.set_interval_ns(
          static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(at - start.at).count()));
      // The kernel reports -1, or refuses the read, when it does not know the speed (a link down, veth).
      if (const auto speed = read_sysfs_number(dir / "speed"); speed && *speed <= 10'000'000) {
        out.set_speed_mbps(static_cast<std::uint32_t>(*speed));
      }
      if (const auto printed = run_ethtool(source_, {"-m", start.port.netdev}, note)) {
        to_proto(parse_module_diagnostics(*printed), *out.mutable_module());
      }
    }
    out.set_note(std::move(note));
  }
  return result;
}

}  // namespace tusk::optics
