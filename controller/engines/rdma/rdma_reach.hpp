// How one agent reaches another over RDMA: the IPv4 address behind a peer's RoCE GIDs, and a
// multi-rail test's rails (each agent's devices, each peer's address on every rail), read from
// the inventories agents sent at hello.
#pragma once

#include <map>
#include <string>

#include "tusk.pb.h"

namespace tusk::rdma {

// The IPv4 address behind one of `to`'s RoCE v2 GIDs (v1 if none), the one sharing the longest
// prefix with an address of `from`; empty when `to` has none.
std::string data_plane_address(const proto::Inventory& from, const proto::Inventory& to);

// Fills `plan`'s rail endpoints and its peers' rail addresses for a test with `rails`; what is
// missing (an agent with too few devices with a RoCE IPv4 address) as one line, empty when none.
std::string bind_inventories(proto::Plan& plan, const std::string& agent,
                             const std::map<std::string, proto::Inventory>& inventories);

}  // namespace tusk::rdma
