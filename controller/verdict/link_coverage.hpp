// Which links of the topology file a test's flows crossed, each way: what a burn-in can claim to
// have exercised, and what it never touched (a spine whose links were down, a leaf pair no step
// joined, ECMP that never hashed onto an uplink). Read from the flows' traced paths.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "controller/topology/fabric_topology.hpp"
#include "controller/verdict/link_localisation.hpp"

namespace tusk {

struct LinkCoverage {
  std::size_t links = 0;      // cables in the topology file: each has two directions
  std::size_t forward = 0;    // cables crossed a -> b (as the file writes their ends) by a flow
  std::size_t backward = 0;   // ... b -> a
  std::size_t both_ways = 0;  // cables crossed both ways
  // Directions no flow crossed, "leaf1:swp3 -> spine2:swp1, cable C-017", in the file's order.
  std::vector<std::string> never;
  // Flows per direction over all 2 x links directions (0 for one never crossed).
  std::size_t flows_min = 0;
  double flows_median = 0;
  std::size_t flows = 0;          // flows whose paths were read
  std::size_t partial_paths = 0;  // of those, traces that missed a hop: links past it are unknown
  double share() const;           // directions crossed over all directions; 0 without links
  std::string text() const;       // one line for the summary
};

// Nothing without a topology file with links, or without a traced flow.
std::optional<LinkCoverage> link_coverage(const Localisation& localisation, const FabricTopology* topology);

// The test's problem when its coverage is below `min_share` (thresholds.min_link_coverage), or
// cannot be known; nullopt when it meets it.
std::optional<std::string> coverage_problem(const std::optional<LinkCoverage>& coverage, double min_share);

}  // namespace tusk
