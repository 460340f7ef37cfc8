#include "agent/rdma/rdma_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "agent/engine.hpp"
#include "agent/plan_bounds.hpp"
#include "agent/rdma/message_format.hpp"
#include "common/wire_bounds.hpp"

namespace tusk::rdma {

using plan_bounds::at_most;
using plan_bounds::finite_at_least_zero;

std::uint32_t slots_for(const proto::RdmaTest& test) {
  return std::max<std::uint32_t>(2 * test.outstanding(), test.outstanding() + test.signal_every());
}

proto::RdmaTest resolve_rdma_plan(const proto::Plan& plan) {
  if (!plan.has_rdma()) throw EngineError("plan has no rdma parameters");
  proto::RdmaTest test = plan.rdma();
  const std::string operation = test.operation().empty() ? "write" : test.operation();
  if (operation != "write" && operation != "write_imm" && operation != "send" && operation != "read") {
    throw EngineError(fmt::format("unknown RDMA operation '{}' (write, write_imm, send, read)", operation));
  }
  test.set_operation(operation);
  // The controller runs a message_sizes sweep as one test per size; a plan with the list is not ours.
  if (test.message_sizes_size() > 0) {
    throw EngineError("the plan lists message_sizes: a controller runs such a sweep one message size per test");
  }
  // Checked as the 64 bits it came in before it becomes a 32-bit slot size: 2^32 + 8 would
  // otherwise pass as 8 bytes beside a header check done on the 64-bit value.
  if (test.message_size() == 0) throw EngineError("message_size 0: a message has at least 1 byte");
  at_most("message_size", test.message_size(), kMaxMessageBytes);
  if (test.message_size() < kMessageHeaderBytes && test.data_check()) {
    throw EngineError(fmt::format("message_size {} B cannot hold the {} B header the data check needs",
                                  test.message_size(), kMessageHeaderBytes));
  }
  if (test.check_every() == 0) test.set_check_every(1);
  at_most("check_every", test.check_every(), rdma_limits::kMaxCheckEvery);
  if (test.outstanding() == 0) test.set_outstanding(16);
  if (test.qps_per_peer() == 0) test.set_qps_per_peer(1);
  at_most("outstanding", test.outstanding(), kMaxOutstanding);
  at_most("qps_per_peer", test.qps_per_peer(), kMaxQpsPerPeer);
  test.set_signal_every(std::clamp<std::uint32_t>(test.signal_every(), 1, test.outstanding()));
  at_most("inline_threshold", test.inline_threshold(), kMaxInlineBytes);
  if (test.path_mtu() != 0 && test.path_mtu() != 256 && test.path_mtu() != 512 && test.path_mtu() != 1024 &&
      test.path_mtu() != 2048 && test.path_mtu() != 4096) {
    throw EngineError(fmt::format("path_mtu {} is not 256, 512, 1024, 2048 or 4096", test.path_mtu()));
  }
  at_most("traffic_class", test.traffic_class(), 255u);
  at_most("port", test.port(), 255u);
  at_most("gid_index", test.gid_index(), 65'535u);
  at_most("ack_timeout", test.ack_timeout(), 31u);
  if (test.cm_port() == 0) test.set_cm_port(kDefaultCmPort);
  at_most("cm_port", test.cm_port(), 65'535u);
  at_most("stall_timeout_ms", test.stall_timeout_ms(), kMaxStallTimeoutMs);
  finite_at_least_zero("rate_bps", test.rate_bps());
  at_most("burst_period_ms", test.burst_period_ms(), kMaxBurstPeriodMs);
  finite_at_least_zero("burst_duty", test.burst_duty());
  at_most("burst_duty", test.burst_duty(), 1.0);
  finite_at_least_zero("trace_rate", test.trace_rate());
  at_most("trace_rate", test.trace_rate(), wire::kMaxTraceRate);
  finite_at_least_zero("scale", test.scale());
  finite_at_least_zero("coverage", test.coverage());
  at_most("coverage", test.coverage(), 1.0);
  if (!test.collective().empty()) {
    if (operation == "read")
      throw EngineError("a collective replay sends its bytes: use write, write_imm or send, not read");
    if (test.steps() == 0 || test.step_period_ms() == 0) {
      throw EngineError(fmt::format("collective {} needs steps and a step period", test.collective()));
    }
    at_most("steps", test.steps(), kMaxSteps);
    at_most("step_period_ms", test.step_period_ms(), kMaxStepPeriodMs);
    at_most("compute_ms", test.compute_ms(), test.step_period_ms());
  }
  if (test.recovery().empty()) test.set_recovery("stop");
  if (test.recovery() != "stop" && test.recovery() != "reconnect") {
    throw EngineError(fmt::format("unknown recovery '{}' (stop, reconnect)", test.recovery()));
  }
  if (test.pacing().empty()) test.set_pacing("auto");
  if (test.pacing() != "auto" && test.pacing() != "hardware" && test.pacing() != "software") {
    throw EngineError(fmt::format("unknown pacing '{}' (auto, hardware, software)", test.pacing()));
  }
  const std::uint32_t rails = test.rails();
  if (rails > kMaxRails || static_cast<std::uint32_t>(test.rail_endpoints_size()) != rails) {
    throw EngineError(fmt::format("the plan asks for {} rails and names {} rail devices (at most {})", rails,
                                  test.rail_endpoints_size(), kMaxRails));
  }
  at_most("peers", plan.peers_size(), kMaxPeers);
  at_most("senders", plan.senders_size(), kMaxPeers);
  // What the plan pins: a buffer of slots_for() messages per QP, to every peer and from every
  // sender, on every rail.
  const std::uint64_t queue_pairs = (static_cast<std::uint64_t>(plan.peers_size()) + plan.senders_size()) *
                                    test.qps_per_peer() * std::max<std::uint32_t>(rails, 1);
  at_most("QPs (peers and senders x qps_per_peer x rails)", queue_pairs, kMaxQueuePairs);
  const std::uint64_t registered = queue_pairs * slots_for(test) * test.message_size();
  if (registered > kMaxRegisteredBytes) {
    throw EngineError(fmt::format("{} QPs of {} messages of {} B would pin {} GiB, more than {} GiB", queue_pairs,
                                  slots_for(test), test.message_size(), registered >> 30, kMaxRegisteredBytes >> 30));
  }
  return test;
}

std::optional<std::string> refuse_connect_request(const proto::Plan& plan, const ConnectRequest& request) {
  const auto sender = std::find_if(plan.senders().begin(), plan.senders().end(),
                                   [&](const proto::PeerEndpoint& s) { return s.agent_name() == request.sender; });
  if (sender == plan.senders().end()) return fmt::format("'{}' is not a sender of this test", request.sender);
  const auto& test = plan.rdma();
  if (request.flow_id >= std::max<std::uint32_t>(test.qps_per_peer(), 1)) {
    return fmt::format("flow {} is not one of the {} its plan makes", request.flow_id, test.qps_per_peer());
  }
  if (request.rail_plus_one > test.rails()) {
    return fmt::format("the connection names rail {} of a plan with {} rails", request.rail_plus_one - 1, test.rails());
  }
  const std::uint64_t planned = static_cast<std::uint64_t>(plan.senders_size()) *
                                std::max<std::uint32_t>(test.qps_per_peer(), 1) *
                                std::max<std::uint32_t>(test.rails(), 1);
  if (request.accepted_before >= planned + kMaxReconnectsPerTest) {
    return fmt::format("this test accepted its plan's {} QPs and {} reconnections already: no more", planned,
                       kMaxReconnectsPerTest);
  }
  const bool on_rail =
      request.rail_plus_one > 0 && static_cast<int>(request.rail_plus_one) <= sender->rail_addresses_size();
  const std::string& expected =
      on_rail ? sender->rail_addresses(static_cast<int>(request.rail_plus_one) - 1) : sender->address();
  // RDMA runs over RoCE v2 IPv4 only (a sender refuses a plan whose peer lacks such an address),
  // so a sender's connection comes from its planned address: none in the plan means its inventory
  // listed no RoCE IPv4 GID, and no connection can be told to be its.
  if (expected.empty()) {
    return fmt::format(
        "the plan has no RoCE IPv4 address of {} (its inventory listed none), so a connection from {} "
        "cannot be told to be its",
        request.sender, request.source_address.empty() ? "an unknown address" : request.source_address);
  }
  if (request.source_address != expected) {
    return fmt::format("it comes from {}, not from {}'s address {}",
                       request.source_address.empty() ? "an address rdma_cm did not give" : request.source_address,
                       request.sender, expected);
  }
  return std::nullopt;
}

std::optional<std::string> refuse_route(const proto::RdmaTest& test, const ResolvedRoute& route) {
  if (test.port() != 0 && test.port() != route.port) {
    return fmt::format(
        "goes through port {}, not the profile's ib_port {} (rdma_cm takes the port from the route to "
        "the peer's address)",
        route.port, test.port());
  }
  // gid_index 0 is a real index, but also the field's default: a profile that wants 0 names it
  // through its address (the GID table's first entry is the port's link-local one).
  if (test.gid_index() != 0 && route.source_gid && route.gid_at_profile_index &&
      *route.source_gid != *route.gid_at_profile_index) {
    return fmt::format(
        "leaves from GID {}, not from the profile's gid_index {} ({}): rdma_cm takes the GID from this "
        "host's address on the route (show_gids lists them)",
        *route.source_gid, test.gid_index(), *route.gid_at_profile_index);
  }
  if (test.path_mtu() != 0 && route.active_mtu != 0 && route.active_mtu != test.path_mtu()) {
    return fmt::format("would run at path MTU {} (rdma_cm's, the port's active MTU), not the profile's path_mtu {}: {}",
                       route.active_mtu, test.path_mtu(),
                       route.active_mtu < test.path_mtu()
                           ? "raise the interface's MTU (and the switches') or lower path_mtu"
                           : "lower the interface's MTU or raise path_mtu");
  }
  return std::nullopt;
}

}  // namespace tusk::rdma
