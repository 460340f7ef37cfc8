#include "controller/switches/switch_queries.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

namespace tusk {

std::vector<SwitchQuery> switch_queries(const FabricTopology& topology, const SnmpCredentials& credentials,
                                        const std::string& credentials_file) {
  std::map<std::string, std::set<std::string>> cabled;
  for (const auto& link : topology.links()) {
    cabled[link.a.device].insert(link.a.interface);
    cabled[link.b.device].insert(link.b.interface);
  }
  std::vector<SwitchQuery> queries;
  std::vector<YamlError> errors;
  for (const auto& device : topology.devices()) {
    if (!device.management) continue;
    const auto credential = credentials.find(device.management->snmp);
    if (credential == credentials.end()) {
      std::vector<std::string> names;
      for (const auto& [name, unused] : credentials) names.push_back(name);
      errors.push_back(
          YamlError{device.management->snmp_pos, device.management->snmp_path,
                    fmt::format("no credentials '{}' in {} (it has: {})", device.management->snmp, credentials_file,
                                names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", ")))});
      continue;
    }
    SwitchQuery query;
    query.target.device = device.name;
    query.target.address = device.management->address;
    query.target.credential = credential->second;
    const auto& ports = cabled[device.name];
    query.ports.assign(ports.begin(), ports.end());
    query.lldp = true;
    queries.push_back(std::move(query));
  }
  if (!errors.empty()) throw TopologyFileInvalid(std::move(errors));
  return queries;
}

}  // namespace tusk
