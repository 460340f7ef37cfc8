// Neighbour resolution on a DPDK port at set-up: ask for a MAC with ARP, answering ARP and ping
// for our own address meanwhile (the switch we ask may be asking about us at the same moment).
#pragma once

#include <chrono>
#include <cstdint>

#include "agent/dpdk/neighbour.hpp"
#include "agent/dpdk/port.hpp"

struct rte_mbuf;

namespace tusk::dpdk {

// `address`'s MAC, from an ARP reply on `port`: a request goes out every 200 ms until one comes
// or `timeout` passes. Frames that are neither the reply nor for us are dropped: nothing else
// runs on the port at set-up. Throws EngineError naming the port, our address and the one asked
// when nobody answers (a wrong gateway, a cable in the wrong port, a leaf without that subnet).
MacAddress resolve_mac(Port& port, const Ipv4Interface& interface, std::uint32_t address,
                       std::chrono::milliseconds timeout = std::chrono::seconds(3));

// The answer to `frame` when it is an ARP request, a ping or a path-trace probe for us (which a
// host's kernel answers port-unreachable), in a new mbuf from the port's
// pool for the caller to send; else nullptr. Test frames cost a few compares (may_ask_for_us) and
// no allocation, so a receive loop may ask this of every frame that is not a test frame.
rte_mbuf* answer_for_us(Port& port, const Ipv4Interface& interface, const rte_mbuf* frame);

// Answers every frame of `frames` that is for us (answer_for_us) on `port`; returns how many
// were. The caller still owns and frees `frames`.
std::size_t answer_frames_for_us(Port& port, const Ipv4Interface& interface, rte_mbuf* const* frames,
                                 std::uint16_t count);

}  // namespace tusk::dpdk
