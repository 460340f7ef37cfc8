// The RDMA engine's limits that both sides hold a test to: the controller when it validates a
// profile, the agent when a plan arrives (agent/rdma/rdma_plan.cpp). One definition, so validate
// never accepts what every agent would refuse.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tusk::rdma_limits {

// A message's bytes are a 32-bit length on the wire and in a buffer slot.
inline constexpr std::uint64_t kMaxMessageBytes = std::uint64_t{1} << 30;
// The header at the start of every checked message (data_check): magic, flow id, sequence,
// length and the payload's CRC-32C (agent/rdma/message_format.hpp); a message holds at least it.
inline constexpr std::size_t kCheckedMessageHeaderBytes = 24;
inline constexpr std::uint32_t kMaxQpsPerPeer = 1024;
// check_every: the payload of at least one message in this many is checked.
inline constexpr std::uint32_t kMaxCheckEvery = 65'536;
inline constexpr std::uint32_t kMaxRails = 16;
// A test's defaults that the agent also takes for a plan that leaves them unset (0).
inline constexpr std::uint16_t kDefaultCmPort = 7471;           // every agent's rdma_cm listener
inline constexpr std::uint32_t kDefaultStallTimeoutMs = 5'000;  // work in flight, no completion

}  // namespace tusk::rdma_limits
