// What a path-trace probe is, whoever sends it (the DPDK engine builds whole frames, the RDMA
// engine sends from a UDP socket): its payload, the TTLs tried, and what an answer to one says.
//
// Layout of a probe's UDP payload (kProbePayloadLength bytes): u32 magic "TSKP" (big-endian), u8
// TTL, then a fixed byte pattern, so a router's quote of it shows whether it arrived damaged.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/wire_bounds.hpp"

namespace tusk::path {

inline constexpr std::uint32_t kProbeMagic = 0x54534B50;  // "TSKP"
inline constexpr std::size_t kProbePayloadLength = 32;
// TTLs a tracer tries; paths in a datacenter fabric are 3 to 7 switches long.
inline constexpr std::uint8_t kMaxProbeTtl = wire::kMaxPathHops;

// The UDP payload of every probe sent with `ttl` (kProbePayloadLength bytes).
void write_probe_payload(std::uint8_t ttl, std::uint8_t* payload);

enum class ProbeAnswer : std::uint8_t {
  TimeExceeded,  // a router where the TTL ran out: a hop of the path
  Unreachable,   // a router with no route onward (a link down, a route withdrawn)
  Destination,   // the flow's destination: the probe crossed the whole path
};

struct ProbeReply {
  ProbeAnswer answer = ProbeAnswer::TimeExceeded;
  std::uint32_t responder = 0;  // the ICMP message's source address
  // The probe quoted: which flow and which TTL it was sent with.
  std::uint32_t dst_address = 0;
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
  std::uint8_t ttl = 0;
  std::uint16_t sequence = 0;
  // The quote holds the whole payload and it differs from what was sent: the probe was damaged
  // on its way out (a router quotes what it received). Quotes too short to tell are intact.
  bool damaged = false;
};

}  // namespace tusk::path
