// The LLDP neighbour of each port an agent tests, so the controller can check the host's cable
// against the topology file before any traffic: asked of lldpd (`lldpcli -f json show neighbors`)
// for ports the kernel sees (af_packet's interface, a NIC the kernel still drives beside DPDK, as
// mlx5 does). lldpd need only listen (`lldpd -r`); a host without it says so in a note.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "common/lldp_neighbour.hpp"

namespace tusk::lldp {

struct LldpcliSource {
  std::string program = "lldpcli";
  std::string socket;  // lldpd's control socket (-u); "" for its default
  std::chrono::milliseconds timeout{2000};
};

struct PortNeighbours {
  std::map<std::string, LldpNeighbour> by_interface;  // the youngest neighbour lldpd knows on each
  std::vector<std::string> notes;                     // why a port has none: lldpcli missing, failed
};

PortNeighbours read_port_neighbours(const LldpcliSource& source, const std::vector<std::string>& interfaces);

}  // namespace tusk::lldp
