// The flow table a localisation reads: one flow per 5-tuple with its path as link ids, a step's
// flows appended with their streams renumbered, clean flows summed per link (each link once per
// flow, however often a looping path crossed it), and what a hostile trace cannot make it hold.
#include "controller/verdict/flow_table.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "common/counter_names.hpp"
#include "common/wire_bounds.hpp"

namespace tusk {
namespace {

namespace c = counters;

// A flow from 10.0.0.1 to 10.0.9.1 by `port`: the receiver's stream (lost frames of 1000, failing
// when any) and the sender's with its trace through `hops`.
std::vector<StreamVerdict> flow_streams(int port, std::uint64_t lost, const std::vector<std::string>& hops) {
  proto::Flow flow;
  flow.set_src_address("10.0.0.1");
  flow.set_dst_address("10.0.9.1");
  flow.set_src_port(static_cast<std::uint32_t>(port));
  flow.set_dst_port(4791);
  flow.set_protocol("udp");
  StreamVerdict tx;
  tx.agent = "a";
  tx.stream.set_kind("tx");
  tx.stream.set_peer("b");
  tx.stream.set_stream_id(fmt::format("tx:b/{}", port));
  *tx.stream.mutable_flow() = flow;
  for (std::size_t k = 0; k < hops.size(); ++k) {
    auto& hop = *tx.stream.add_path();
    hop.set_ttl(static_cast<std::uint32_t>(k + 1));
    hop.set_address(hops[k]);
    hop.set_probes(100);
    hop.set_answers(100);
  }
  StreamVerdict rx;
  rx.agent = "b";
  rx.stream.set_kind("rx");
  rx.stream.set_peer("a");
  rx.stream.set_stream_id(fmt::format("rx:a/{}", port));
  *rx.stream.mutable_flow() = flow;
  (*rx.stream.mutable_counters())[std::string(c::kRxFrames)] = 1000 - lost;
  (*rx.stream.mutable_counters())[std::string(c::kLostFrames)] = lost;
  ThresholdCheck check;
  check.threshold.metric = "loss_ratio";
  check.passed = lost == 0;
  rx.checks.push_back(check);
  return {tx, rx};
}

std::vector<StreamVerdict> joined(std::vector<std::vector<StreamVerdict>> parts) {
  std::vector<StreamVerdict> all;
  for (auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

TEST(FlowTable, AStepsFlowsJoinTheScheduleWithTheirStepAndStreamsAndTheCleanOnesSummed) {
  const std::vector<std::string> path{"10.0.1.254", "10.0.9.1"};
  const auto streams = joined({flow_streams(49152, 7, path), flow_streams(49153, 0, path)});
  FlowTable step;
  step.add(streams, nullptr);
  ASSERT_EQ(step.size(), 2u);
  EXPECT_EQ(step[0].rx_stream, 1u);
  EXPECT_EQ(step[0].tx_stream, 0u);
  EXPECT_EQ(step[0].loss_events, 7u);
  EXPECT_EQ(step[0].loss_trials, 1000u);
  EXPECT_FALSE(step[0].clean());
  EXPECT_TRUE(step[1].clean());

  // The schedule kept streams 0 and 1 of the step as its 40th and 41st.
  FlowTable schedule;
  schedule.append(step, 3, {40, 41, kNoStream, kNoStream}, /*sum_clean=*/true);
  ASSERT_EQ(schedule.size(), 1u);
  EXPECT_EQ(schedule[0].step, 3u);
  EXPECT_EQ(schedule[0].rx_stream, 41u);
  EXPECT_EQ(schedule[0].tx_stream, 40u);
  EXPECT_EQ(schedule.clean_flows(), 1u);
  const TracedFlowPath kept = schedule.traced(0);
  EXPECT_EQ(kept.sender, "a");
  EXPECT_EQ(kept.receiver, "b");
  EXPECT_EQ(kept.links, (std::vector<std::string>{"10.0.0.1 -> 10.0.1.254", "10.0.1.254 -> 10.0.9.1"}));
  EXPECT_TRUE(kept.failing);
  for (const std::uint32_t id : schedule.links_of(0)) {
    const FlowLink& link = schedule.link(id);
    EXPECT_EQ(link.clean_flows(), 1u) << link.named.key;
    EXPECT_EQ(link.clean[0].trials, 1000) << "the clean flow's frames, in the loss fit";
    EXPECT_EQ(link.clean[1].flows, 0u) << "it counted no damage";
    EXPECT_EQ(link.probes.probes, 200u) << "both flows' probes";
  }
  EXPECT_EQ(schedule.link(schedule.links_of(0)[0]).clean_first, 1u);
  EXPECT_EQ(schedule.link(schedule.links_of(0)[0]).clean_sender, 0u) << "agent a";

  // Its clean flows' identities are its own: it joins no other table.
  EXPECT_THROW(FlowTable{}.append(schedule, 4, {}), std::logic_error);
}

TEST(FlowTable, APathThatLoopsCrossesEachLinkOnceInItsSums) {
  // 10.0.1.254 -> 10.0.2.254 twice: a routing loop the trace saw.
  const auto streams = flow_streams(49152, 0, {"10.0.1.254", "10.0.2.254", "10.0.1.254", "10.0.2.254", "10.0.9.1"});
  FlowTable step;
  step.add(streams, nullptr);
  ASSERT_EQ(step.size(), 1u);
  EXPECT_EQ(step.links_of(0).size(), 5u) << "the path as the trace saw it";
  FlowTable schedule;
  schedule.append(step, 1, {0, 1}, /*sum_clean=*/true);
  EXPECT_EQ(schedule.link_count(), 4u);
  for (std::uint32_t id = 0; id < schedule.link_count(); ++id) {
    EXPECT_EQ(schedule.link(id).clean_flows(), 1u) << schedule.link(id).named.key;
  }
}

TEST(FlowTable, ATraceLongerThanAnyProbeGoesIsCutAtTheLongestPath) {
  std::vector<std::string> hops;
  for (int k = 1; k <= 200; ++k) hops.push_back(fmt::format("10.1.{}.{}", k / 250, k % 250 + 1));
  FlowTable table;
  table.add(flow_streams(49152, 1, hops), nullptr);
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table.links_of(0).size(), wire::kMaxPathHops);
  EXPECT_FALSE(table[0].has(FlowRecord::kReached));
}

}  // namespace
}  // namespace tusk
