#include "agent/rdma/discovery.hpp"

#include <arpa/inet.h>
#include <endian.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <infiniband/verbs.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "agent/rdma/verbs_owners.hpp"

namespace tusk::rdma {
namespace {

std::string port_state_name(ibv_port_state state) {
  return ibv_port_state_str(state);
}

// Lane speed in Gbit/s from the verbs speed code (see ibv_query_port(3)).
double lane_speed_gbps(std::uint8_t code) {
  switch (code) {
    case 1:
      return 2.5;
    case 2:
      return 5.0;
    case 4:
    case 8:
      return 10.0;
    case 16:
      return 14.0;
    case 32:
      return 25.0;
    case 64:
      return 50.0;
    case 128:
      return 100.0;
    default:
      return 0.0;
  }
}

std::uint32_t width_lanes(std::uint8_t code) {
  switch (code) {
    case 1:
      return 1;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    case 16:
      return 2;
    default:
      return 0;
  }
}

// The IPv4 or IPv6 address a RoCE GID encodes (IPv4-mapped GIDs give the IPv4 address).
std::string gid_ip(const ibv_gid& gid) {
  static constexpr std::uint8_t kV4Prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  char text[INET6_ADDRSTRLEN] = {};
  if (std::memcmp(gid.raw, kV4Prefix, sizeof(kV4Prefix)) == 0) {
    inet_ntop(AF_INET, gid.raw + 12, text, sizeof(text));
  } else {
    inet_ntop(AF_INET6, gid.raw, text, sizeof(text));
  }
  return text;
}

void add_gids(ibv_context* context, std::uint8_t port_num, const ibv_port_attr& port_attr, proto::RdmaPort& port,
              std::vector<std::string>& notes, const std::string& device) {
  const int table_size = port_attr.gid_tbl_len;
  if (table_size <= 0) return;
  std::vector<ibv_gid_entry> entries(static_cast<std::size_t>(table_size));
  const ssize_t count = ibv_query_gid_table(context, entries.data(), entries.size(), 0);
  if (count < 0) {
    notes.push_back(fmt::format("{}: ibv_query_gid_table failed: {}", device, std::strerror(static_cast<int>(-count))));
    return;
  }
  for (ssize_t i = 0; i < count; ++i) {
    const auto& entry = entries[static_cast<std::size_t>(i)];
    if (entry.port_num != port_num) continue;
    auto* gid = port.add_gids();
    gid->set_index(entry.gid_index);
    gid->set_gid(gid_text(entry.gid));
    gid->set_type(entry.gid_type == IBV_GID_TYPE_ROCE_V2   ? "RoCE v2"
                  : entry.gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1"
                                                           : "IB");
    if (entry.gid_type != IBV_GID_TYPE_IB) gid->set_ip(gid_ip(entry.gid));
    char ifname[IF_NAMESIZE] = {};
    if (entry.ndev_ifindex != 0 && if_indextoname(entry.ndev_ifindex, ifname) != nullptr) gid->set_netdev(ifname);
  }
}

}  // namespace

double port_speed_gbps(const ibv_port_attr& port) {
  return lane_speed_gbps(port.active_speed) * width_lanes(port.active_width);
}

std::string gid_text(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.raw, text, sizeof(text));
  return text;
}

Discovery discover_devices() {
  Discovery found;
  auto& [devices, notes] = found;
  int count = 0;
  DeviceList list(ibv_get_device_list(&count));
  if (!list) {
    const int error = errno;
    notes.push_back(error == ENOSYS ? std::string("this kernel has no RDMA support (ibv_get_device_list: ENOSYS)")
                                    : fmt::format("ibv_get_device_list failed: {}", std::strerror(error)));
    return found;
  }
  for (int i = 0; i < count; ++i) {
    ibv_device* device = list.get()[i];
    const std::string name = ibv_get_device_name(device);
    DeviceContext context(ibv_open_device(device));
    if (!context) {
      notes.push_back(fmt::format("{}: ibv_open_device failed: {}", name, std::strerror(errno)));
      continue;
    }
    ibv_device_attr attr{};
    if (int rc = ibv_query_device(context.get(), &attr); rc != 0) {
      notes.push_back(fmt::format("{}: ibv_query_device failed: {}", name, std::strerror(rc)));
      continue;
    }
    proto::RdmaDevice out;
    out.set_name(name);
    out.set_node_guid(fmt::format("{:016x}", be64toh(ibv_get_device_guid(device))));
    out.set_firmware(attr.fw_ver);
    for (std::uint8_t port_num = 1; port_num <= attr.phys_port_cnt; ++port_num) {
      ibv_port_attr port_attr{};
      if (int rc = ibv_query_port(context.get(), port_num, &port_attr); rc != 0) {
        notes.push_back(fmt::format("{} port {}: ibv_query_port failed: {}", name, port_num, std::strerror(rc)));
        continue;
      }
      auto* port = out.add_ports();
      port->set_port_num(port_num);
      port->set_state(port_state_name(port_attr.state));
      port->set_active_mtu(static_cast<std::uint32_t>(128u << port_attr.active_mtu));
      port->set_link_layer(port_attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand");
      port->set_width(width_lanes(port_attr.active_width));
      port->set_speed_gbps(lane_speed_gbps(port_attr.active_speed) * port->width());
      add_gids(context.get(), port_num, port_attr, *port, notes, name);
    }
    devices.push_back(std::move(out));
  }
  return found;
}

void keep_allowed_devices(Discovery& discovery, const std::vector<std::string>& allowed) {
  if (allowed.empty()) return;
  std::vector<std::string> found;
  for (const auto& device : discovery.devices) found.push_back(device.name());
  for (const auto& wanted : allowed) {
    if (std::find(found.begin(), found.end(), wanted) == found.end()) {
      discovery.notes.push_back(
          fmt::format("--rdma-device {}: no such device (found: {})", wanted,
                      found.empty() ? std::string("none") : fmt::format("{}", fmt::join(found, ", "))));
    }
  }
  std::vector<proto::RdmaDevice> kept;
  for (const auto& wanted : allowed) {
    const auto named = [&wanted](const proto::RdmaDevice& device) { return device.name() == wanted; };
    const auto device = std::find_if(discovery.devices.begin(), discovery.devices.end(), named);
    if (device != discovery.devices.end() && std::none_of(kept.begin(), kept.end(), named)) kept.push_back(*device);
  }
  discovery.devices = std::move(kept);
}

}  // namespace tusk::rdma
