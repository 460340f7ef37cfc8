// A topology file written from what the switches and the hosts report, for a person to review and
// keep: every switch a seed file gives a management address is read (its ports, their IPv4
// addresses from IP-MIB and its LLDP-MIB neighbours), the agents' hosts say what their ports heard
// (lldpd or their frames, from a run's report.json), and each cable LLDP shows becomes a link with
// both ends, each neighbour no switch manages a device. A host port is where the seed places its
// address, else the agent's port with its address. The flows' traced hops (from the same report)
// place the addresses of switches nobody could read: a hop between two placed ones is on the one
// device cabled to both, at the port facing the hop before when one cable joins them.
#pragma once

#include <string>
#include <vector>

#include "controller/switches/host_lldp.hpp"
#include "controller/switches/switch_reading.hpp"
#include "controller/switches/traced_hop_places.hpp"
#include "controller/topology/fabric_topology.hpp"

namespace tusk {

struct DiscoveredTopology {
  std::string yaml;               // the file, loadable by load_topology_text
  std::size_t switches_read = 0;  // of the seed's managed devices
  std::size_t host_ports = 0;     // hosts' ports whose LLDP neighbour made a cable
  std::size_t links = 0;
  std::size_t traced_addresses = 0;  // hop addresses placed from the traced paths
  std::vector<std::string> notes;    // switches that could not be read, cables seen from one end only
};

struct DiscoveryInput {
  FabricTopology seed;
  std::vector<SwitchReading> readings;
  std::vector<HostLldp> hosts;  // ports the seed does not place are named by their agent and netdev
  std::vector<TracedPath> paths;
};

DiscoveredTopology discover_topology(const DiscoveryInput& input);

}  // namespace tusk
