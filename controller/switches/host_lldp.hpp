// What an agent's host heard over LLDP on the ports it tests, from its inventory: a DPDK port
// (lldpd's, or its own frames') and an RDMA port's netdev (lldpd's). The cabling check and
// `topology discover` hold these against the topology file.
#pragma once

#include <string>
#include <vector>

#include "controller/verdict/cabling_check.hpp"
#include "tusk.pb.h"

namespace tusk {

// Each port that has both a neighbour and an address to place it by; every text lldp_text-bounded
// (an agent is a peer).
std::vector<HostLldp> hosts_lldp_of(const std::string& agent, const proto::Inventory& inventory);

}  // namespace tusk
