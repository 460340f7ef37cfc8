#include "agent/rdma/counters/netdev_counters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <fstream>
#include <system_error>
#include <utility>

#include "common/sysfs_name.hpp"

namespace tusk::rdma {
namespace fs = std::filesystem;
namespace {

// A sysfs attribute's first line, trimmed; empty when it cannot be read (an unused GID entry's
// ndevs file answers EINVAL).
std::string first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.pop_back();
  return line;
}

std::vector<std::string> entries(const fs::path& directory) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  return names;
}

// GID table indexes in numeric order: index 0 is the port's default GID, the likeliest to be set.
std::vector<std::string> in_index_order(std::vector<std::string> names) {
  const auto index = [](const std::string& name) {
    unsigned value = ~0u;
    std::from_chars(name.data(), name.data() + name.size(), value);
    return value;
  };
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    return std::pair(index(a), a) < std::pair(index(b), b);
  });
  return names;
}

}  // namespace

PortNetdev find_port_netdev(const std::string& device, std::uint32_t port, const fs::path& sysfs_root) {
  const fs::path device_dir = sysfs_root / "class" / "infiniband" / device;
  const fs::path port_dir = device_dir / "ports" / std::to_string(port);
  std::error_code ec;
  if (!is_one_path_component(device) || !fs::is_directory(port_dir, ec)) {
    return {"", fmt::format("{} does not exist", port_dir.string())};
  }
  if (const auto link_layer = first_line(port_dir / "link_layer"); link_layer == "InfiniBand") {
    return {"", "the port's link layer is InfiniBand: it has no Ethernet counters"};
  }
  for (const auto& index : in_index_order(entries(port_dir / "gid_attrs" / "ndevs"))) {
    if (auto name = first_line(port_dir / "gid_attrs" / "ndevs" / index); is_one_path_component(name))
      return {name, ""};
  }
  // Older kernels have no gid_attrs/ndevs; the PCI function's netdevs are the port's candidates.
  const fs::path net_dir = device_dir / "device" / "net";
  auto netdevs = entries(net_dir);
  std::sort(netdevs.begin(), netdevs.end());
  if (netdevs.size() == 1 && is_one_path_component(netdevs.front())) return {netdevs.front(), ""};
  // Several netdevs on one function (mlx4's two ports): dev_port is the 0-based port number.
  for (const auto& name : netdevs) {
    if (is_one_path_component(name) && first_line(net_dir / name / "dev_port") == std::to_string(port - 1))
      return {name, ""};
  }
  return {"", fmt::format("no netdev in {} nor one for port {} in {}", (port_dir / "gid_attrs" / "ndevs").string(),
                          port, net_dir.string())};
}

NetdevCounterReader::NetdevCounterReader(std::string netdev)
    : stats_(std::move(netdev)), names_(counters::ethtool::reported_names(stats_.names())) {}

rdma::PortCounterSnapshot NetdevCounterReader::read() {
  rdma::PortCounterSnapshot snapshot;
  try {
    snapshot.values = counters::ethtool::reported_values(names_, stats_.read());
  } catch (const std::exception& e) {
    // Left empty: counter_delta reports every name as unpaired rather than invent a delta.
    if (!failed_before_) note_ = fmt::format("ethtool counters of {} left out: {}", stats_.interface(), e.what());
    failed_before_ = true;
  }
  return snapshot;
}

std::optional<std::string> NetdevCounterReader::take_note() {
  return std::exchange(note_, std::nullopt);
}

rdma::PortCounterDelta netdev_counter_delta(const rdma::PortCounterSnapshot& earlier,
                                            const rdma::PortCounterSnapshot& later) {
  auto delta = rdma::counter_delta(earlier, later);
  counters::ethtool::add_pause_totals(delta.values);
  return delta;
}

void merge_netdev_counters(const rdma::CounterValues& netdev_values, rdma::CounterValues& stream_values) {
  for (const auto& [name, value] : netdev_values) {
    if (stream_values.contains(name)) {
      stream_values.insert_or_assign("ethtool:" + name, value);
    } else {
      stream_values.emplace(name, value);
    }
  }
}

std::unique_ptr<NetdevCounterReader> open_port_netdev_counters(const std::string& device, std::uint32_t port,
                                                               std::string& why, const fs::path& sysfs_root) {
  const PortNetdev netdev = find_port_netdev(device, port, sysfs_root);
  if (netdev.name.empty()) {
    why = fmt::format("{} port {}: {}", device, port, netdev.why_none);
    return nullptr;
  }
  try {
    return std::make_unique<NetdevCounterReader>(netdev.name);
  } catch (const std::exception& e) {
    why = fmt::format("{} port {} (netdev {}): {}", device, port, netdev.name, e.what());
    return nullptr;
  }
}

}  // namespace tusk::rdma
