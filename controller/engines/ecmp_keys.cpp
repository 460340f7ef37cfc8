#include "controller/engines/ecmp_keys.hpp"

#include <fmt/format.h>

#include "controller/engines/ecmp_coverage.hpp"

namespace tusk::ecmp_keys {

Resolved flows_for_paths(profile_schema::TestCheck& check, std::uint32_t max_flows, std::string_view flows_key) {
  Resolved resolved;
  resolved.coverage = check.draft.coverage.value_or(kDefaultCoverage);
  const auto* paths_origin = check.draft.origin("ecmp_paths");
  if (const auto* origin = check.draft.origin("coverage"); origin && !paths_origin) {
    check.fail("coverage", origin,
               "coverage is the chance that every ECMP path carries a flow: declare ecmp_paths too");
  }
  if (!paths_origin || !check.draft.ecmp_paths) return resolved;
  resolved.paths = *check.draft.ecmp_paths;
  if (check.draft.origin(flows_key)) {
    check.fail("ecmp_paths", paths_origin,
               fmt::format("{} and ecmp_paths cannot both be set: ecmp_paths works out the {}", flows_key,
                           flows_key == "qps_per_peer" ? "QPs per peer" : "flows per peer"));
    return resolved;
  }
  const std::uint32_t flows = flows_for_coverage(resolved.paths, resolved.coverage);
  if (flows > max_flows) {
    check.fail("ecmp_paths", paths_origin,
               fmt::format("{} paths at {:g}% coverage need {} flows per peer, above the {} a receiver tracks; lower "
                           "coverage or give {}",
                           resolved.paths, resolved.coverage * 100, flows, max_flows, flows_key));
    return resolved;
  }
  resolved.flows = flows;
  return resolved;
}

}  // namespace tusk::ecmp_keys
