#include "agent/dpdk/send_rate.hpp"

#include "agent/dpdk/dpdk_plan.hpp"

namespace tusk::dpdk {

OfferedRate send_rate(const proto::DpdkTest& test) {
  // A size list replaces frame_size: the engine sends the list and nothing else.
  const SizeMix mix = size_mix(test.frame_size(), test.frame_sizes());
  return offered_rate(test.rate_pps(), test.rate_bps(), mix);
}

double capped_bit_rate(const proto::Plan& plan) {
  check_dpdk_plan(plan);
  return send_rate(plan.dpdk()).capped_bps;
}

}  // namespace tusk::dpdk
