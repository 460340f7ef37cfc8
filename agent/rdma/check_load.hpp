// How much of the RDMA datapath thread checking message payloads takes, so that a check that sets
// the throughput is said, never mistaken for the link's (issue 61): estimated from the bytes
// checked and this core's own measured check rate, not timed per message (a clock read costs as
// much as checking a small message).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common/check_share.hpp"

namespace tusk::rdma {

// The time this core takes to check a byte of `message_size`-byte messages, measured on 256 KiB of
// them, three times (well under a millisecond on hardware; an emulated VM takes longer).
double check_ns_per_byte(std::size_t message_size);

// The notice when checking `bytes` in `seconds` at `ns_per_byte` took kCheckLoadSaid of the
// thread or more, with the check_every that would take about a quarter; nullopt below it.
std::optional<std::string> check_load_notice(double bytes, double seconds, double ns_per_byte,
                                             std::uint32_t check_every, std::uint64_t message_size);

// Before the start: the notice when checking every payload of `offered_bytes_per_s` (what
// `whence` says the agent may receive: its port's speed, or its senders' rates) would take
// kCheckLoadSaid of the thread or more, with the check_every that would take about a quarter;
// nullopt below it.
std::optional<std::string> check_capacity_notice(double offered_bytes_per_s, const std::string& whence,
                                                 double ns_per_byte, std::uint32_t check_every,
                                                 std::uint64_t message_size);

}  // namespace tusk::rdma
