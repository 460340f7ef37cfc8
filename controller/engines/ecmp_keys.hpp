// What the engines that spread a peer's traffic over ECMP paths share: turning the test's
// `ecmp_paths` and `coverage` (common keys, read into the draft) into a flow count: UDP source
// ports for DPDK, QPs for RDMA.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "controller/profile/profile_schema.hpp"

namespace tusk::ecmp_keys {

inline constexpr double kDefaultCoverage = 0.99;

struct Resolved {
  std::uint32_t paths = 0;  // 0: none declared
  double coverage = kDefaultCoverage;
  std::optional<std::uint32_t> flows;  // the count, when paths were declared and it is allowed
};

// With ecmp_paths set: the flows per peer that cover every path with probability `coverage`
// (absent after failing the test when that is more than `max_flows`, or when `flows_key`, which
// gives a count outright, is set too). Fails coverage without ecmp_paths.
Resolved flows_for_paths(profile_schema::TestCheck& check, std::uint32_t max_flows, std::string_view flows_key);

}  // namespace tusk::ecmp_keys
