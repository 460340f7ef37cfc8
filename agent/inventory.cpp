#include "agent/inventory.hpp"

#include <unistd.h>

#include "common/version.hpp"

namespace tusk {

namespace {

void add_lldp_neighbours(proto::Inventory& inventory, const lldp::LldpcliSource& source,
                         std::vector<std::string>& notes) {
  std::vector<std::string> netdevs;
  for (const auto& port : inventory.dpdk_ports()) {
    if (!port.netdev().empty()) netdevs.push_back(port.netdev());
  }
  if (netdevs.empty()) return;
  lldp::PortNeighbours found = lldp::read_port_neighbours(source, netdevs);
  for (auto& port : *inventory.mutable_dpdk_ports()) {
    const auto neighbour = found.by_interface.find(port.netdev());
    if (port.netdev().empty() || neighbour == found.by_interface.end()) continue;
    proto::LldpNeighbour& out = *port.mutable_lldp();
    out.set_system_name(neighbour->second.system_name);
    out.set_port_id(neighbour->second.port_id);
    out.set_port_description(neighbour->second.port_description);
    out.set_chassis_id(neighbour->second.chassis_id);
    out.set_management_address(neighbour->second.management_address);
    out.set_ttl_s(neighbour->second.ttl_s);
  }
  notes.insert(notes.end(), found.notes.begin(), found.notes.end());
}

}  // namespace

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
  add_lldp_neighbours(inventory, lldp, notes);
  for (const auto& [name, engine] : engines.engines) inventory.add_engines(name);
  notes.insert(notes.end(), engines.notes.begin(), engines.notes.end());
  for (auto& note : notes) inventory.add_notes(std::move(note));
  return inventory;
}

}  // namespace tusk
