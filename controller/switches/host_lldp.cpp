#include "controller/switches/host_lldp.hpp"

#include "common/lldp_neighbour.hpp"

namespace tusk {
namespace {

// `address` may carry its prefix ("192.168.1.11/24"): the topology file places the bare address.
HostLldp host_lldp(const std::string& agent, const std::string& address, const std::string& netdev,
                   const proto::LldpNeighbour& heard) {
  HostLldp host;
  host.agent = agent;
  host.address = lldp_text(address.substr(0, address.find('/')));
  host.netdev = lldp_text(netdev);
  host.from_frames = heard.source() == "frames";
  host.neighbour.local_port = host.netdev;
  host.neighbour.system_name = lldp_text(heard.system_name());
  host.neighbour.port_id = lldp_text(heard.port_id());
  host.neighbour.port_description = lldp_text(heard.port_description());
  host.neighbour.chassis_id = lldp_text(heard.chassis_id());
  return host;
}

}  // namespace

std::vector<HostLldp> hosts_lldp_of(const std::string& agent, const proto::Inventory& inventory) {
  std::vector<HostLldp> hosts;
  for (const auto& port : inventory.dpdk_ports()) {
    if (!port.has_lldp() || port.ipv4().empty()) continue;
    hosts.push_back(host_lldp(agent, port.ipv4(), port.netdev().empty() ? port.name() : port.netdev(), port.lldp()));
  }
  for (const auto& device : inventory.rdma_devices()) {
    for (const auto& port : device.ports()) {
      if (port.has_lldp() && !port.roce_ipv4().empty()) {
        hosts.push_back(host_lldp(agent, port.roce_ipv4(), port.netdev(), port.lldp()));
      }
    }
  }
  return hosts;
}

}  // namespace tusk
