// How many flows (UDP source ports) to send between two hosts so that every one of `paths`
// equal-cost paths carries at least one with probability `coverage`, if ECMP hashes each flow onto
// a path uniformly (R-Pingmesh's count, treating the paths as independent: each is empty with
// probability ((m-1)/m)^n, and all m must be non-empty):
//
//   n = ceil( ln(1 - coverage^(1/paths)) / ln((paths - 1) / paths) )
//
// One path needs one flow. Throws std::invalid_argument for paths 0 or a coverage outside (0, 1).
#pragma once

#include <cstdint>

namespace tusk {

std::uint32_t flows_for_coverage(std::uint32_t paths, double coverage);

}  // namespace tusk
