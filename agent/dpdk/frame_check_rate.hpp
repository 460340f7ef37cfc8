// What one core checks of received frames' PRBS payloads, measured when the agent starts, so that
// `plan --inventory` can hold a profile's received bytes to it (issue 61).
#pragma once

#include <cstddef>

namespace tusk::dpdk {

// Nanoseconds this core takes to check a byte of PRBS-31 payload in frames of `frame_bytes`
// (IPv4/UDP with the Tusk header), as a receiving queue checks it: each payload from the state its
// header carries. The best of three passes over 1 MiB of frames; well under a millisecond on
// hardware. 0 where the check miscounted its own clean frames.
double frame_check_ns_per_byte(std::size_t frame_bytes);

}  // namespace tusk::dpdk
