#include "agent/dpdk/dpdk_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "agent/dpdk/frame_format.hpp"
#include "agent/engine.hpp"
#include "agent/payload/prbs.hpp"
#include "agent/plan_bounds.hpp"
#include "common/wire_bounds.hpp"

namespace tusk::dpdk {

using plan_bounds::at_most;
using plan_bounds::finite_at_least_zero;

void check_dpdk_plan(const proto::Plan& plan) {
  if (!plan.has_dpdk()) throw EngineError("plan has no dpdk parameters");
  const auto& test = plan.dpdk();
  if (!payload::pattern_from_name(test.pattern().empty() ? "prbs31" : test.pattern())) {
    throw EngineError(fmt::format("unknown pattern '{}'", test.pattern()));
  }
  if (!test.encapsulation().empty() && test.encapsulation() != "ethernet" && test.encapsulation() != "ipv4_udp") {
    throw EngineError(fmt::format("unknown encapsulation '{}' (ethernet or ipv4_udp)", test.encapsulation()));
  }
  at_most("VLAN id", test.vlan(), kMaxVlanId);
  at_most("PCP", test.pcp(), kMaxPcp);
  at_most("EtherType", test.ethertype(), 0xFFFFu);
  at_most("DSCP", test.dscp(), kMaxDscp);
  at_most("ECN", test.ecn(), kMaxEcn);
  at_most("DSCP classes", test.dscp_classes_size(), kMaxDscp + 1);
  for (const std::uint32_t dscp : test.dscp_classes()) at_most("DSCP class", dscp, kMaxDscp);
  at_most("TTL", test.ttl(), 255u);
  at_most("UDP port", test.udp_port(), 0xFFFFu);
  if (test.frame_sizes_size() == 0 && test.frame_size() == 0) throw EngineError("the plan gives no frame size");
  at_most("frame sizes", test.frame_sizes_size(), kMaxFrameSizes);
  at_most("frame_size", test.frame_size(), kMaxFrameBytes);
  for (const std::uint32_t size : test.frame_sizes()) at_most("frame size", size, kMaxFrameBytes);
  finite_at_least_zero("rate_pps", test.rate_pps());
  finite_at_least_zero("rate_bps", test.rate_bps());
  finite_at_least_zero("target_ber", test.target_ber());
  finite_at_least_zero("confidence", test.confidence());
  at_most("confidence", test.confidence(), 1.0);
  finite_at_least_zero("trace_rate", test.trace_rate());
  at_most("trace_rate", test.trace_rate(), tusk::wire::kMaxTraceRate);
  at_most("queues", test.queues(), tusk::wire::kMaxDpdkQueues);
  at_most("burst_frames", test.burst_frames(), tusk::wire::kMaxBurstFrames);
  at_most("peers", plan.peers_size(), kMaxDpdkPeers);
  at_most("senders", plan.senders_size(), kMaxDpdkPeers);
  // Flow k of a peer uses source port udp_source_port + k: summed in 64 bits, so a huge flow count
  // cannot wrap round to a small last port.
  const std::uint64_t flows = std::max<std::uint32_t>(1, test.flows_per_peer());
  at_most("flows_per_peer", flows, tusk::wire::kMaxDpdkFlowsPerPeer);
  const std::uint64_t first_port = test.udp_source_port() > 0 ? test.udp_source_port() : kDefaultUdpPort;
  at_most("the last flow's UDP source port", first_port + flows - 1, 0xFFFFu);
  for (const auto& peer : plan.peers()) {
    at_most("source ports of a peer", peer.source_ports_size(), static_cast<int>(tusk::wire::kMaxDpdkFlowsPerPeer));
    for (const std::uint32_t port : peer.source_ports()) at_most("UDP source port", port, 0xFFFFu);
  }
  // A port's receiver tracks every sender's flows (a loopback or bidirectional test's peers send too).
  const std::uint64_t senders = std::max({1, plan.peers_size(), plan.senders_size()});
  if (senders * flows > kMaxRxStreams) {
    throw EngineError(fmt::format("{} senders with {} flows each are more than the {} streams a port tracks", senders,
                                  flows, kMaxRxStreams));
  }
}

}  // namespace tusk::dpdk
