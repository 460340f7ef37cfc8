// Bounds on plan values that both sides keep: the controller when it reads a profile, the agent
// when a plan arrives (it trusts no controller). The full list of what is bounded, and where, is
// at the top of proto/tusk.proto.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace tusk::wire {

// Faster sampling busy-loops an agent for nothing; slower tells too little of a flap.
inline constexpr std::chrono::milliseconds kMinSampleInterval{100};
inline constexpr std::chrono::milliseconds kMaxSampleInterval{60'000};
// How far ahead a StartAt may be: the controller's start margin is at most 30 s.
inline constexpr std::chrono::milliseconds kMaxStartAhead{std::chrono::minutes(5)};

// A counter an agent sent, bounded so that two of them add up without wrapping.
inline constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 62;

// A flow's path trace: one hop per TTL up to this (the agent's probes go no further).
inline constexpr unsigned kMaxPathHops = 12;
// Path-trace probes per second, all flows of one agent's test together (trace_rate). Switches
// answer them on their CPU, which policers guard (CoPP): the default keeps a leaf with 48 hosts
// under 2,000 answers a second, and past the limit probes load a control plane more than they
// tell. A routed test without trace_rate traces at the default; 0 traces nothing.
inline constexpr std::uint32_t kMaxTraceRate = 10'000;
inline constexpr std::uint32_t kDefaultTraceRate = 100;
// A DPDK port's RX and TX queue pairs, one RX and one TX thread each: the agent's --dpdk-queues, a
// plan's queues and a profile's `queues` are held to this one number.
inline constexpr std::uint32_t kMaxDpdkQueues = 16;
// Flows (UDP source ports, each its own stream) a DPDK test sends each peer: the profile's
// flows_per_peer, what ecmp_paths may work out, and a plan's flows and source ports per peer. Each
// is a stream the receiver tracks on its own (dpdk::kMaxRxStreams bounds them all together).
inline constexpr std::uint32_t kMaxDpdkFlowsPerPeer = 128;
// The longest train of DPDK frames sent back to back (burst_frames): a switch buffer's worth of
// 9 KB frames is well under it. The profile checks it; the agent refuses a plan beyond it.
inline constexpr std::uint32_t kMaxBurstFrames = 4096;
// What one stream of a sample or result may take, serialized (its counters, gauges, flow, path and
// ids; a NIC's stream with hundreds of ethtool counters is ~15 KiB), and what the streams of one
// sample may take together per stream its plan can make: the controller drops what is past either.
inline constexpr std::size_t kMaxStreamBytes = 64 * 1024;
inline constexpr std::size_t kSampleBytesPerPlannedStream = 8 * 1024;
// A sample's stream names its counters and gauges (a layout sample) first, whenever they change,
// and every this many samples, so a controller that missed one (records dropped on overflow)
// reads the stream again within this many samples; the samples between carry values only.
inline constexpr std::uint32_t kLayoutEverySamples = 100;
// ethtool reads a port's module over a slow bus (I2C): optics are read at most once this often
// during a test, whatever the profile or a controller asks.
inline constexpr std::chrono::milliseconds kMinOpticsInterval{1000};
// An agent's event message or error text past this is cut (on a character).
inline constexpr std::size_t kMaxPeerMessageBytes = 1024;

}  // namespace tusk::wire
