#include "agent/inventory.hpp"

#include <unistd.h>

#include "common/version.hpp"

namespace tusk {

namespace {

void set_neighbour(proto::LldpNeighbour& out, const LldpNeighbour& neighbour, const char* source) {
  out.set_system_name(neighbour.system_name);
  out.set_port_id(neighbour.port_id);
  out.set_port_description(neighbour.port_description);
  out.set_chassis_id(neighbour.chassis_id);
  out.set_management_address(neighbour.management_address);
  out.set_ttl_s(neighbour.ttl_s);
  out.set_source(source);
}

}  // namespace

void refresh_lldp_neighbours(proto::Inventory& inventory, const lldp::LldpcliSource* source,
                             const EngineCatalog& engines, std::vector<std::string>* notes) {
  if (!source) {  // lldpd's answers stay; a DPDK port without one hears its frames again
    for (auto& port : *inventory.mutable_dpdk_ports()) {
      if (port.lldp().source() == "lldpd") continue;
      port.clear_lldp();
      if (!engines.heard_lldp) continue;
      if (const auto heard = engines.heard_lldp(port.name())) set_neighbour(*port.mutable_lldp(), *heard, "frames");
    }
    return;
  }
  std::vector<std::string> netdevs;
  for (const auto& port : inventory.dpdk_ports()) {
    if (!port.netdev().empty()) netdevs.push_back(port.netdev());
  }
  for (const auto& device : inventory.rdma_devices()) {
    for (const auto& port : device.ports()) {
      if (!port.netdev().empty()) netdevs.push_back(port.netdev());
    }
  }
  lldp::PortNeighbours found;
  if (!netdevs.empty()) found = lldp::read_port_neighbours(*source, netdevs);
  const auto lldpd_heard = [&](const std::string& netdev) -> const LldpNeighbour* {
    const auto neighbour = netdev.empty() ? found.by_interface.end() : found.by_interface.find(netdev);
    return neighbour == found.by_interface.end() ? nullptr : &neighbour->second;
  };
  for (auto& port : *inventory.mutable_dpdk_ports()) {
    port.clear_lldp();
    if (const LldpNeighbour* neighbour = lldpd_heard(port.netdev())) {
      set_neighbour(*port.mutable_lldp(), *neighbour, "lldpd");
    } else if (engines.heard_lldp) {
      if (const auto heard = engines.heard_lldp(port.name())) set_neighbour(*port.mutable_lldp(), *heard, "frames");
    }
  }
  // A RoCE port's frames are the kernel's: lldpd hears them, the engine never sees one.
  for (auto& device : *inventory.mutable_rdma_devices()) {
    for (auto& port : *device.mutable_ports()) {
      port.clear_lldp();
      if (const LldpNeighbour* neighbour = lldpd_heard(port.netdev())) {
        set_neighbour(*port.mutable_lldp(), *neighbour, "lldpd");
      }
    }
  }
  if (notes) notes->insert(notes->end(), found.notes.begin(), found.notes.end());
}

proto::Inventory collect_inventory(const std::string& agent_name, const std::vector<std::string>& dpdk_ports,
                                   const EngineCatalog& engines, const lldp::LldpcliSource& lldp) {
  proto::Inventory inventory;
  char host[256] = {};
  inventory.set_hostname(gethostname(host, sizeof(host) - 1) == 0 ? host : agent_name);
  inventory.set_agent_version(kTuskVersion);

  std::vector<std::string> notes;
  for (const auto& device : engines.rdma_devices) *inventory.add_rdma_devices() = device;
  if (inventory.rdma_devices_size() == 0) notes.push_back("no RDMA device found on this host");
  for (const auto& port : engines.dpdk_ports) *inventory.add_dpdk_ports() = port;
  if (engines.dpdk_ports.empty()) {
    for (const auto& port : dpdk_ports) inventory.add_dpdk_ports()->set_name(port);
  }
  refresh_lldp_neighbours(inventory, &lldp, engines, &notes);
  for (const auto& [name, engine] : engines.engines) inventory.add_engines(name);
  if (engines.check_rates.rdma_size() > 0 || engines.check_rates.dpdk_frame_bytes_per_s() > 0) {
    *inventory.mutable_check_rates() = engines.check_rates;
  }
  notes.insert(notes.end(), engines.notes.begin(), engines.notes.end());
  for (auto& note : notes) inventory.add_notes(std::move(note));
  return inventory;
}

}  // namespace tusk
