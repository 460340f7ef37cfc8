// Whether an agent can check what a DPDK plan has it receive, by the check rate its inventory says
// it measured (issue 61): the `check_load` of the DPDK engine's slice.
#pragma once

#include <map>
#include <string>

#include "tusk.pb.h"

namespace tusk {

// "" when checking would take less than kCheckLoadSaid of the receiving queues' cores, or when the
// plan receives nothing or the inventory does not tell.
std::string dpdk_check_load(const proto::Plan& plan, const proto::Inventory& inventory,
                            const std::map<std::string, const proto::Plan*>& test_plans);

}  // namespace tusk
