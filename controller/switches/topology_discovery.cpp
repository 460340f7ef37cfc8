#include "controller/switches/topology_discovery.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

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

DiscoveredTopology discover_topology(const FabricTopology& seed, const std::vector<SwitchReading>& readings) {
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
      const LinkEnd near{reading.device, neighbour.local_port};
      if (!interfaces.contains(far.device)) order.push_back(far.device);
      interfaces[near.device].try_emplace(near.interface);
      interfaces[far.device].try_emplace(far.interface);
      // Copies: std::minmax of two temporaries would return references to them.
      const std::string near_text = near.text(), far_text = far.text();
      const std::pair<std::string, std::string> key = std::minmax(near_text, far_text);
      cables.insert(key);
      ++seen_from[key];
    }
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
      "# Written by tusk-controller topology discover from {} switches' LLDP. Review it before use:\n"
      "# LLDP gives no port addresses (the seed's are kept, the rest are ~), and hosts that send no\n"
      "# LLDP are not in it.\n{}\n",
      out.switches_read, yaml.c_str());
  return out;
}

}  // namespace tusk
