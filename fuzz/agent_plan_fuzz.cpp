// The agent's checks of a plan, both engines, up to the first device call: the input is a
// serialized proto::Plan (as a hostile controller would send it). Whatever it holds, each check
// either refuses it with EngineError or hands on values within the bounds its engine relies on.
// For an accepted RDMA plan, connect requests made from the same bytes go through the data
// plane's authentication.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "agent/agent_limits.hpp"
#include "agent/dpdk/send_rate.hpp"
#include "agent/engine.hpp"
#include "agent/rdma/rdma_engine.hpp"
#include "agent/rdma/rdma_plan.hpp"

namespace {

void check_rdma(const tusk::proto::Plan& plan, const std::uint8_t* data, std::size_t size) {
  tusk::proto::RdmaTest test;
  try {
    test = tusk::rdma::resolve_rdma_plan(plan);
  } catch (const tusk::EngineError&) {
    return;
  }
  // What the engine goes on to rely on.
  if (test.message_size() == 0 || test.message_size() > tusk::rdma::kMaxMessageBytes) std::abort();
  if (test.outstanding() == 0 || test.qps_per_peer() == 0 || test.signal_every() == 0) std::abort();
  if (test.signal_every() > test.outstanding() || test.rails() > tusk::rdma::kMaxRails) std::abort();
  const std::uint64_t queue_pairs = (static_cast<std::uint64_t>(plan.peers_size()) + plan.senders_size()) *
                                    test.qps_per_peer() * std::max<std::uint32_t>(test.rails(), 1);
  if (queue_pairs * tusk::rdma::slots_for(test) * test.message_size() > tusk::rdma::kMaxRegisteredBytes) std::abort();
  tusk::proto::Plan resolved = plan;
  *resolved.mutable_rdma() = test;
  for (std::size_t at = 0; at + 6 <= size && at < 96; at += 6) {
    const std::string sender = plan.senders_size() > 0 ? plan.senders(data[at] % plan.senders_size()).agent_name()
                                                       : std::string(reinterpret_cast<const char*>(data + at), 2);
    const std::uint32_t flow = data[at + 1] | (data[at + 2] << 8);
    const std::string source = data[at + 4] % 2 ? std::string() : "10.0.0." + std::to_string(data[at + 5]);
    (void)tusk::rdma::refuse_connect_request(resolved, {sender, flow, data[at + 3], source});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tusk::proto::Plan plan;
  if (!plan.ParseFromArray(data, static_cast<int>(size))) return 0;
  const tusk::AgentLimits limits;
  // As the agent's PlanRunner does: the engine's checks (inside capped_bit_rate), then the caps.
  if (plan.has_dpdk()) {
    try {
      (void)tusk::plan_beyond_limits(plan, tusk::dpdk::capped_bit_rate(plan), limits);
    } catch (const tusk::EngineError&) {
    }
  }
  if (plan.has_rdma()) {
    try {
      (void)tusk::plan_beyond_limits(plan, tusk::rdma::capped_bit_rate(plan), limits);
    } catch (const tusk::EngineError&) {
    }
    check_rdma(plan, data, size);
  }
  return 0;
}
