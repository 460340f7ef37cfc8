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

// Each device in `order`, with its management address where the seed gave one, and its
// interfaces' addresses (~ for none).
void emit_devices(YAML::Emitter& yaml, const std::vector<std::string>& order,
                  const std::map<std::string, const DeviceManagement*>& management,
                  std::map<std::string, std::map<std::string, std::vector<std::string>>>& interfaces) {
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
}

}  // namespace

DiscoveredTopology discover_topology(const DiscoveryInput& input) {
  const FabricTopology& seed = input.seed;
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
  const auto add_addresses = [&](const std::string& device, const std::string& interface,
                                 const std::vector<std::string>& addresses) {
    if (!interfaces.contains(device)) order.push_back(device);
    auto& known = interfaces[device][interface];
    for (const auto& address : addresses) {
      if (std::find(known.begin(), known.end(), address) == known.end()) known.push_back(address);
    }
  };
  std::set<std::pair<std::string, std::string>> cables;
  std::vector<std::pair<LinkEnd, LinkEnd>> cable_ends;
  std::map<std::pair<std::string, std::string>, int> seen_from;  // how many ends reported each cable
  const auto add_cable = [&](const LinkEnd& near, const LinkEnd& far) {
    for (const LinkEnd* end : {&near, &far}) add_addresses(end->device, end->interface, {});
    // Copies: std::minmax of two temporaries would return references to them.
    const std::string near_text = near.text(), far_text = far.text();
    const std::pair<std::string, std::string> key = std::minmax(near_text, far_text);
    if (cables.insert(key).second) cable_ends.emplace_back(near, far);
    ++seen_from[key];
  };
  std::vector<PortPrefix> prefixes;
  for (const auto& reading : input.readings) {
    if (!reading.ok() || !reading.lldp_read) {
      out.notes.push_back(reading.ok() ? fmt::format("{}: no LLDP-MIB", reading.device) : reading.error);
      continue;
    }
    ++out.switches_read;
    for (const auto& [port, addresses] : reading.port_addresses) {
      if (!usable_name(port)) continue;
      add_addresses(reading.device, port, addresses);
      for (const auto& address : addresses) {
        const auto length = reading.prefix_lengths.find(address);
        if (length != reading.prefix_lengths.end())
          prefixes.push_back({{reading.device, port}, address, length->second});
      }
    }
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
  for (const auto& host : input.hosts) {
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
  std::map<std::string, std::string> address_device;
  for (const auto& [device, ports] : interfaces) {
    for (const auto& [port, addresses] : ports) {
      for (const auto& address : addresses) address_device.emplace(address, device);
    }
  }
  TracedHopPlaces traced = place_traced_hops(input.paths, address_device, cable_ends, prefixes);
  for (const auto& hop : traced.placed) {
    if (hop.interface.empty()) {
      out.notes.push_back(fmt::format("traced hop {} is on {}, on one of its cables to {}: give it its port",
                                      hop.address, hop.device, hop.before));
      continue;
    }
    // Only an address no port had is placed, so no port's addresses need a scan for it: a scan
    // per hop was quadratic in the hops placed on one port.
    if (!interfaces.contains(hop.device)) order.push_back(hop.device);
    interfaces[hop.device][hop.interface].push_back(hop.address);
    ++out.traced_addresses;
  }
  out.notes.insert(out.notes.end(), traced.notes.begin(), traced.notes.end());
  YAML::Emitter yaml;
  yaml << YAML::BeginMap << YAML::Key << "devices" << YAML::Value << YAML::BeginMap;
  emit_devices(yaml, order, management, interfaces);
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
      "# Written by tusk-controller topology discover from {} switches' and {} host ports' LLDP and {} traced\n"
      "# paths. Review it before use: a port's addresses are its switch's (IP-MIB), the seed's or the traced\n"
      "# hops' ({} placed), ~ where none says; a cable neither end of which is read or heard is not in it.\n{}\n",
      out.switches_read, out.host_ports, input.paths.size(), out.traced_addresses, yaml.c_str());
  return out;
}

}  // namespace tusk
