// What an agent's host heard over LLDP on the ports it tests, from its inventory: a DPDK port
// (lldpd's, or its own frames') and an RDMA port's netdev (lldpd's). The cabling check and
// `topology discover` hold these against the topology file.
#pragma once

#include <string>
#include <vector>

#include "controller/switches/switch_reading.hpp"
#include "tusk.pb.h"

namespace tusk {

// What an agent's host heard on one of its ports (lldpd, through the agent's inventory).
struct HostLldp {
  std::string agent;
  std::string address;            // the port's data-plane address, which places it in the topology file
  std::string netdev;             // the port's kernel name, else its DPDK name
  SwitchLldpNeighbour neighbour;  // its local_port is the netdev
  bool from_frames = false;       // heard in the port's own LLDPDUs (a DPDK port), not from lldpd
};

// Each port that has both a neighbour and an address to place it by; every text lldp_text-bounded
// (an agent is a peer).
std::vector<HostLldp> hosts_lldp_of(const std::string& agent, const proto::Inventory& inventory);

}  // namespace tusk
