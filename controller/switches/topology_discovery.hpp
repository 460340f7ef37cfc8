// A topology file written from what the switches and the hosts report, for a person to review and
// keep: every switch a seed file gives a management address is read (its ports and LLDP-MIB
// neighbours), the agents' hosts say what their ports heard (lldpd, from a run's report.json), and
// each cable LLDP shows becomes a link with both ends, each neighbour no switch manages a device.
// Switch addresses are not discovered (LLDP carries none for a port): the seed's are kept, others
// are ~. A host port is where the seed places its address, else the agent's port with its address.
#pragma once

#include <string>
#include <vector>

#include "controller/switches/switch_reading.hpp"
#include "controller/topology/fabric_topology.hpp"
#include "controller/verdict/cabling_check.hpp"

namespace tusk {

struct DiscoveredTopology {
  std::string yaml;               // the file, loadable by load_topology_text
  std::size_t switches_read = 0;  // of the seed's managed devices
  std::size_t host_ports = 0;     // hosts' ports whose LLDP neighbour made a cable
  std::size_t links = 0;
  std::vector<std::string> notes;  // switches that could not be read, cables seen from one end only
};

// `hosts`' ports that the seed does not place are named by their agent and netdev.
DiscoveredTopology discover_topology(const FabricTopology& seed, const std::vector<SwitchReading>& readings,
                                     const std::vector<HostLldp>& hosts = {});

}  // namespace tusk
