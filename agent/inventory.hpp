// The registration inventory: what this host is and what it can test.
#pragma once

#include <string>
#include <vector>

#include "agent/engine.hpp"
#include "agent/lldp/port_neighbours.hpp"
#include "tusk.pb.h"

namespace tusk {

// Each DPDK port the kernel also sees gets the LLDP neighbour lldpd heard on it (`lldp`).
proto::Inventory collect_inventory(const std::string& agent_name, const std::vector<std::string>& dpdk_ports,
                                   const EngineCatalog& engines, const lldp::LldpcliSource& lldp);

}  // namespace tusk
