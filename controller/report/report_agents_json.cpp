// report.json's "agents": each agent as it said it was (its inventory, its ports and their LLDP
// neighbours) and how its connection went.
#include <string>
#include <vector>

#include "controller/report/report_json_parts.hpp"
#include "controller/verdict/cabling_check.hpp"

namespace tusk {

namespace {

using json = nlohmann::ordered_json;

// An agent's texts arrive printable (controller/run/peer_texts.hpp), what its lldpd repeats of a
// switch's words too.
json lldp_neighbour_json(const proto::LldpNeighbour& heard) {
  return {{"system_name", heard.system_name()},
          {"port_id", heard.port_id()},
          {"port_description", heard.port_description()},
          {"chassis_id", heard.chassis_id()},
          {"source", lldp_source_name(heard.source())}};
}

}  // namespace

json agents_inventory_json(const std::vector<AgentView>& views) {
  json agents = json::array();
  for (const auto& view : views) {
    json agent;
    agent["name"] = view.name;
    agent["hostname"] = view.inventory.hostname();
    agent["node"] = view.node;
    agent["node_proof"] = view.node_proof;
    agent["version"] = view.inventory.agent_version();
    agent["remote"] = view.remote;
    agent["connected_at_end"] = view.connected;
    agent["connections"] = view.connects;
    agent["duplicate_records_dropped"] = view.duplicate_records;
    agent["texts_cut"] = view.texts_cut;
    agent["texts_escaped"] = view.texts_escaped;
    agent["records_missing"] = view.missing_records;
    agent["engines"] = std::vector<std::string>(view.inventory.engines().begin(), view.inventory.engines().end());
    agent["notes"] = std::vector<std::string>(view.inventory.notes().begin(), view.inventory.notes().end());
    json devices = json::array();
    for (const auto& device : view.inventory.rdma_devices()) {
      json ports = json::array();
      for (const auto& port : device.ports()) {
        ports.push_back({{"port", port.port_num()},
                         {"state", port.state()},
                         {"mtu", port.active_mtu()},
                         {"link_layer", port.link_layer()},
                         {"speed_gbps", port.speed_gbps()},
                         {"gids", port.gids_size()},
                         {"netdev", port.netdev().empty() ? json(nullptr) : json(port.netdev())},
                         {"roce_ipv4", port.roce_ipv4().empty() ? json(nullptr) : json(port.roce_ipv4())},
                         {"lldp_neighbour", port.has_lldp() ? lldp_neighbour_json(port.lldp()) : json(nullptr)}});
      }
      devices.push_back({{"name", device.name()}, {"firmware", device.firmware()}, {"ports", ports}});
    }
    agent["rdma_devices"] = devices;
    json dpdk_ports = json::array();
    for (const auto& port : view.inventory.dpdk_ports()) {
      dpdk_ports.push_back({{"name", port.name()},
                            {"driver", port.driver()},
                            {"mac", port.mac()},
                            {"ipv4", port.ipv4()},
                            {"gateway", port.gateway()},
                            {"queues", port.queues()},
                            {"netdev", port.netdev().empty() ? json(nullptr) : json(port.netdev())},
                            {"lldp_neighbour", port.has_lldp() ? lldp_neighbour_json(port.lldp()) : json(nullptr)}});
    }
    agent["dpdk_ports"] = dpdk_ports;
    agents.push_back(std::move(agent));
  }
  return agents;
}

}  // namespace tusk
