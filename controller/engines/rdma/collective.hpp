// A training-step replay's numbers, worked out once in the planner and carried in the plan: S after
// scale, what each rank sends each peer per step, and nccl-tests' bus bandwidth factor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tusk.pb.h"

namespace tusk {

// S of a training-step replay: collective_bytes times scale (0 = 1), in whole bytes.
std::uint64_t scaled_collective_bytes(const proto::RdmaTest& test);

// What each rank sends to each of its peers per step, for a collective of S bytes over G ranks, as
// the ring and pairwise algorithms put it on the wire: all_reduce (ring, to the next rank)
// 2(G-1)/G*S; all_gather and reduce_scatter (ring) (G-1)/G*S; all_to_all S/G to every other rank,
// (G-1)/G*S in all. Rounded to whole bytes.
std::uint64_t peer_bytes_per_step(const std::string& collective, std::uint64_t collective_bytes, std::size_t ranks);

// nccl-tests' bus bandwidth factor: busbw = algbw * factor; all_reduce 2(n-1)/n, the others (n-1)/n.
double bus_bandwidth_factor(const std::string& collective, std::size_t ranks);

}  // namespace tusk
