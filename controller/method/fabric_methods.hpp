// What the fabric methods (draft-calabria-bmwg-ai-fabric-training-bench) make of their one step:
//   - ecmp_balance: per leaf, the bytes the test's flows put on each of its equal-cost uplinks
//     (from the flows' traced paths), their max/mean and Jain's index, against the profile's
//     limits and against what hashing that many flows at random would do;
//   - link_failure: per flow, whether its path crossed the link taken down, the traffic it lost
//     and how long it took to resume on another path: the fabric's convergence time.
// Pure functions of the step's outcome, the method and the topology file.
#pragma once

#include <optional>
#include <string>

#include "controller/method/method_result.hpp"
#include "controller/topology/fabric_topology.hpp"

namespace tusk {

EcmpBalanceResult judge_ecmp_balance(const TestOutcome& step, const MethodSpec& method, const FabricTopology* topology);

// How link_failure's command ran, as the run saw it.
struct HookRun {
  std::string command;
  std::optional<double> ran_at_s;  // into the test; none: the test ended before it was due
  std::optional<int> exit_status;  // none: it had not ended when the test did (it was killed)
};

LinkFailureResult judge_link_failure(const TestOutcome& step, const MethodSpec& method, const FabricTopology* topology,
                                     const HookRun& hook);

// The max/mean of flow counts that `flows` flows hashed uniformly onto `uplinks` uplinks exceed
// with probability at most `alpha` (a union bound over the uplinks on the binomial tail); 0 when
// even all flows on one uplink is likelier than that.
double predicted_max_over_mean(std::size_t flows, std::size_t uplinks, double alpha = 1e-3);

// Sets result.ecmp_balance or result.link_failure from the method's one step, and fails that
// step when the method fails.
void judge_fabric_method(MethodResult& result, const MethodSpec& method, const FabricTopology* topology,
                         const std::optional<HookRun>& hook);

}  // namespace tusk
