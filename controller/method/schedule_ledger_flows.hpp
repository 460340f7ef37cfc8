// The flow table's part of a schedule's ledger (schedule_ledger_flows.cpp); only the ledger uses it.
#pragma once

#include <memory>

#include "controller/topology/fabric_topology.hpp"
#include "controller/verdict/flow_table.hpp"
#include "schedule_ledger.pb.h"

namespace tusk {

void save_flow_table(const FlowTable& table, ledger::FlowTable& out, const FabricTopology* topology);
// Throws std::runtime_error saying which of its indices is out of its tables.
std::shared_ptr<FlowTable> load_flow_table(const ledger::FlowTable& in, const FabricTopology* topology);

}  // namespace tusk
