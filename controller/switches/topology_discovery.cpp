#include "controller/switches/topology_discovery.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>

namespace tusk {
namespace {

// The neighbour's end as a topology names it: its system name (else its chassis id) and its port
// id, or the description when the id is a MAC (lldpd's default; the description is the name).
LinkEnd discovered_end(const SwitchLldpNeighbour& neighbour) {
  const bool id_is_mac = neighbour.port_id.size() == 17 && neighbour.port_id[2] == ':';
  return {neighbour.system_name.empty() ? neighbour.chassis_id : neighbour.system_name,
          id_is_mac && !neighbour.port_description.empty() ? neighbour.port_description : neighbour.port_id};
}

bool usable_name(const std::string& name) {
  return !name.empty() && name.find(':') == std::string::npos;
}

}  // namespace

DiscoveredTopology discover_topology(const FabricTopology& seed, const std::vector<SwitchReading>& readings,
                                     const std::vector<HostLldp>& hosts) {
  DiscoveredTopology out;
  // Devices in the seed's order, then new ones by name; each with its interfaces and addresses.
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> interfaces;
  std::map<std::string, const DeviceManagement*> management;
  for (const auto& device : seed.devices()) {
    order.push_back(device.name);
    auto& ports = interfaces[device.name];
    for (const auto& interface : device.interfaces) ports[interface.name] = interface.addresses;
    if (device.management) management[device.name] = &*device.management;
  }
  std::set<std::pair<std::string, std::string>> cables;
  std::map<std::pair<std::string, std::string>, int> seen_from;  // how many ends reported each cable
  const auto add_cable = [&](const LinkEnd& near, const LinkEnd& far) {
    for (const LinkEnd* end : {&near, &far}) {
      if (!interfaces.contains(end->device)) order.push_back(end->device);
      interfaces[end->device].try_emplace(end->interface);
    }
    // Copies: std::minmax of two temporaries would return references to them.
    const std::string near_text = near.text(), far_text = far.text();
    const std::pair<std::string, std::string> key = std::minmax(near_text, far_text);
    cables.insert(key);
    ++seen_from[key];
  };
  for (const auto& reading : readings) {
    if (!reading.ok() || !reading.lldp_read) {
      out.notes.push_back(reading.ok() ? fmt::format("{}: no LLDP-MIB", reading.device) : reading.error);
      continue;
    }
    ++out.switches_read;
    for (const auto& neighbour : reading.lldp) {
      const LinkEnd far = discovered_end(neighbour);
      if (!usable_name(far.device) || !usable_name(far.interface) || !usable_name(neighbour.local_port)) {
        out.notes.push_back(fmt::format("{}:{}: a neighbour without a usable name ({} {})", reading.device,
                                        neighbour.local_port, far.device, far.interface));
        continue;
      }
      add_cable({reading.device, neighbour.local_port}, far);
    }
  }
  for (const auto& host : hosts) {
    const LinkEnd far = discovered_end(host.neighbour);
    const auto place = host.address.empty() ? std::nullopt : seed.find(host.address);
    const bool placed = place && !place->interface.empty();
    // A DPDK port the kernel cannot see is named by its PCI address, whose colons would read as
    // device:interface.
    std::string port = host.netdev;
    std::replace(port.begin(), port.end(), ':', '-');
    const LinkEnd near = placed ? LinkEnd{place->device, place->interface} : LinkEnd{host.agent, port};
    if (!usable_name(far.device) || !usable_name(far.interface) || !usable_name(near.device) ||
        !usable_name(near.interface)) {
      out.notes.push_back(fmt::format("agent {} port {}: a neighbour without a usable name ({} {})", host.agent,
                                      host.netdev, far.device, far.interface));
      continue;
    }
    ++out.host_ports;
    add_cable(near, far);
    auto& addresses = interfaces[near.device][near.interface];
    if (!placed && !host.address.empty() && addresses.empty()) addresses.push_back(host.address);
  }
  YAML::Emitter yaml;
  yaml << YAML::BeginMap << YAML::Key << "devices" << YAML::Value << YAML::BeginMap;
  for (const auto& name : order) {
    yaml << YAML::Key << name << YAML::Value << YAML::BeginMap;
    if (const auto managed = management.find(name); managed != management.end()) {
      yaml << YAML::Key << "management" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "address"
           << YAML::Value << managed->second->address << YAML::Key << "snmp" << YAML::Value << managed->second->snmp
           << YAML::EndMap;
    }
    yaml << YAML::Key << "interfaces" << YAML::Value << YAML::BeginMap;
    for (const auto& [interface, addresses] : interfaces[name]) {
      yaml << YAML::Key << interface << YAML::Value;
      if (addresses.empty()) {
        yaml << YAML::Null;
      } else if (addresses.size() == 1) {
        yaml << addresses.front();
      } else {
        yaml << YAML::Flow << addresses;
      }
    }
    yaml << YAML::EndMap << YAML::EndMap;
  }
  yaml << YAML::EndMap << YAML::Key << "links" << YAML::Value << YAML::BeginSeq;
  for (const auto& [a, b] : cables) {
    yaml << YAML::BeginMap << YAML::Key << "ends" << YAML::Value << fmt::format("{} <-> {}", a, b) << YAML::EndMap;
    const bool both_managed =
        management.contains(a.substr(0, a.find(':'))) && management.contains(b.substr(0, b.find(':')));
    if (both_managed && seen_from[{a, b}] < 2) {
      out.notes.push_back(fmt::format("{} <-> {}: seen from one end only", a, b));
    }
  }
  yaml << YAML::EndSeq << YAML::EndMap;
  out.links = cables.size();
  out.yaml = fmt::format(
      "# Written by tusk-controller topology discover from {} switches' and {} host ports' LLDP. Review it\n"
      "# before use: LLDP gives no switch port addresses (the seed's are kept, the rest are ~), and a\n"
      "# cable neither end of which is read or heard is not in it.\n{}\n",
      out.switches_read, out.host_ports, yaml.c_str());
  return out;
}

}  // namespace tusk
