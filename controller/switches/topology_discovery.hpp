// A topology file written from what the switches report, for a person to review and keep: every
// switch a seed file gives a management address is read (its ports and LLDP-MIB neighbours), and
// each cable LLDP shows becomes a link with both ends, each neighbour no switch manages a device.
// Addresses are not discovered (LLDP carries none for a port): the seed's are kept, others are ~.
#pragma once

#include <string>
#include <vector>

#include "controller/switches/switch_reading.hpp"
#include "controller/topology/fabric_topology.hpp"

namespace tusk {

struct DiscoveredTopology {
  std::string yaml;               // the file, loadable by load_topology_text
  std::size_t switches_read = 0;  // of the seed's managed devices
  std::size_t links = 0;
  std::vector<std::string> notes;  // switches that could not be read, cables seen from one end only
};

DiscoveredTopology discover_topology(const FabricTopology& seed, const std::vector<SwitchReading>& readings);

}  // namespace tusk
