// The registration inventory: what this host is and what it can test.
#pragma once

#include <string>
#include <vector>

#include "agent/engine.hpp"
#include "agent/lldp/port_neighbours.hpp"
#include "tusk.pb.h"

namespace tusk {

// Each tested port gets its LLDP neighbour (refresh_lldp_neighbours).
proto::Inventory collect_inventory(const std::string& agent_name, const std::vector<std::string>& dpdk_ports,
                                   const EngineCatalog& engines, const lldp::LldpcliSource& lldp);

// Each tested port's LLDP neighbour now: lldpd's for a port the kernel also sees (an RDMA port's
// netdev, af_packet's interface), else, for a DPDK port, what its own frames announced
// (EngineCatalog::heard_lldp); none where neither knows one. lldpd is asked once for all ports;
// why it could not say goes to `notes` when given. Asked again at each registration, so a cable
// moved since the agent started is seen. Without `source` lldpd is not asked (it was a moment
// ago): its neighbours stay and the DPDK ports' frames are read again.
void refresh_lldp_neighbours(proto::Inventory& inventory, const lldp::LldpcliSource* source,
                             const EngineCatalog& engines, std::vector<std::string>* notes);

}  // namespace tusk
