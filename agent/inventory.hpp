// The registration inventory: what this host is and what it can test.
#pragma once

#include <string>
#include <vector>

#include "agent/engine.hpp"
#include "tusk.pb.h"

namespace tusk {

proto::Inventory collect_inventory(const std::string& agent_name, const std::vector<std::string>& dpdk_ports,
                                   const EngineCatalog& engines);

}  // namespace tusk
