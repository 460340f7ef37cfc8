// Whether an agent can check what an RDMA plan has it receive, by the check rates its inventory
// says it measured (issue 61): the `check_load` of the RDMA engine's slice.
#pragma once

#include <map>
#include <string>

#include "tusk.pb.h"

namespace tusk {

// "" when checking would take less than kCheckLoadSaid of the agent's RDMA datapath thread, or
// when the plan checks nothing it receives or the inventory does not tell.
std::string rdma_check_load(const proto::Plan& plan, const proto::Inventory& inventory,
                            const std::map<std::string, const proto::Plan*>& test_plans);

}  // namespace tusk
