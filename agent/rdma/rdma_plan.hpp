// What the RDMA engine takes from a plan and from a peer's connect request, checked like the
// network input they are: every numeric field against the type it is stored in, zero where it
// divides, counts against the memory they pin. Pure functions, so a unit test and the agent_plan
// fuzz target reach every check without an RDMA device. The bounds are listed in docs/wire-bounds.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/rdma_limits.hpp"
#include "tusk.pb.h"

namespace tusk::rdma {

inline constexpr std::uint64_t kMaxMessageBytes = rdma_limits::kMaxMessageBytes;
inline constexpr std::uint32_t kMaxQpsPerPeer = rdma_limits::kMaxQpsPerPeer;
inline constexpr std::uint32_t kMaxOutstanding = 8192;
inline constexpr std::uint32_t kMaxInlineBytes = 4096;
inline constexpr std::uint32_t kMaxRails = rdma_limits::kMaxRails;
inline constexpr int kMaxPeers = 4096;                                         // peers, and senders, each
inline constexpr std::uint64_t kMaxQueuePairs = 65'536;                        // every QP of the plan, both ways
inline constexpr std::uint64_t kMaxRegisteredBytes = std::uint64_t{32} << 30;  // every QP's buffer
inline constexpr std::uint32_t kMaxStallTimeoutMs = 3'600'000;
inline constexpr std::uint32_t kMaxBurstPeriodMs = 60'000;
inline constexpr std::uint32_t kMaxSteps = 10'000'000;
inline constexpr std::uint32_t kMaxStepPeriodMs = 3'600'000;
inline constexpr std::uint16_t kDefaultCmPort = rdma_limits::kDefaultCmPort;

// A message buffer of each QP holds this many messages.
std::uint32_t slots_for(const proto::RdmaTest& test);

// `plan`'s RDMA parameters checked and their defaults resolved (operation "write", 16 outstanding,
// one QP per peer, signal_every within outstanding, recovery "stop", pacing "auto", the default CM
// port). Throws EngineError naming the field, its value and its bound.
proto::RdmaTest resolve_rdma_plan(const proto::Plan& plan);

// What a peer's connect request claims, from its private data and its source address.
struct ConnectRequest {
  std::string_view sender;  // the agent it says it is
  std::uint32_t flow_id = 0;
  std::uint32_t rail_plus_one = 0;    // 0: no rail
  std::string_view source_address;    // where it came from ("" when rdma_cm does not say)
  std::uint64_t accepted_before = 0;  // connections this test accepted before this one
};
// A sender reconnects a flow after each break (a flap, a retired QP); each accepted connection
// keeps its counts for the test. Past the plan's QPs and this many reconnections in one test, a
// connection is refused: a flapping link a minute for a day reconnects each flow ~1,440 times.
inline constexpr std::uint64_t kMaxReconnectsPerTest = 65'536;

// Why this plan refuses `request`, or nullopt to accept it: only the plan's senders, with a flow id
// and a rail their plan has, from the address the plan gives them on that rail, may connect, so no
// one else on the fabric pins this agent's memory or retires a sender's QP in its name; and only
// so often (kMaxReconnectsPerTest).
std::optional<std::string> refuse_connect_request(const proto::Plan& plan, const ConnectRequest& request);

// What rdma_cm's resolved route gives a QP: the port, its source GID and the GID the profile's
// gid_index holds on that port (as text, nullopt where they cannot be read), and the port's active
// MTU in bytes. GIDs are compared, not indexes: RoCE v1 and v2 entries repeat one GID.
struct ResolvedRoute {
  std::uint32_t port = 0;
  std::optional<std::string> source_gid;
  std::optional<std::string> gid_at_profile_index;
  std::uint32_t active_mtu = 0;
};

// Why the plan's ib_port, gid_index or path_mtu refuses this route, or nullopt when it has none or
// they match: rdma_cm takes all three from the route (the port and GID from the addresses, the
// path MTU from the port's active MTU), so a profile's other value cannot be had, and a test that
// ran anyway would not be the one asked for.
std::optional<std::string> refuse_route(const proto::RdmaTest& test, const ResolvedRoute& route);

}  // namespace tusk::rdma
