// What the DPDK engine takes from a plan, checked like the network input it is before any port is
// touched: every number against the type it is stored in and the memory it would cost. A pure
// function, so a unit test and the agent_plan fuzz target reach it without DPDK. What depends on
// the port (its mbuf room, MTU, address, queues) is checked where the port is known, in
// DpdkEngine::prepare. The bounds are listed in docs/wire-bounds.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tusk.pb.h"

namespace tusk::dpdk {

inline constexpr std::size_t kMaxRxStreams = 1024;       // streams a port tracks: senders x flows
inline constexpr int kMaxFrameSizes = 1024;              // a sweep's or IMIX's sizes
inline constexpr std::uint32_t kMaxFrameBytes = 0xFFFF;  // a 16-bit frame length
inline constexpr int kMaxDpdkPeers = 4096;               // peers, and senders, each

// Throws EngineError naming the field, its value and its bound.
void check_dpdk_plan(const proto::Plan& plan);

}  // namespace tusk::dpdk
