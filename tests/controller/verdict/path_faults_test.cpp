// Flows that fail while their siblings between the same hosts pass: the sign of a path fault.
#include "controller/verdict/path_faults.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tusk {
namespace {

StreamVerdict flow(const std::string& agent, const std::string& peer, int id, bool passed,
                   const std::string& kind = "rx") {
  StreamVerdict verdict;
  verdict.agent = agent;
  verdict.stream.set_stream_id("rx:" + peer + "/" + std::to_string(id));
  verdict.stream.set_peer(peer);
  verdict.stream.set_kind(kind);
  auto& f = *verdict.stream.mutable_flow();
  f.set_src_address("192.168.102.10");
  f.set_src_port(49151 + id);
  f.set_dst_address("192.168.101.10");
  f.set_dst_port(34997);
  f.set_protocol("udp");
  ThresholdCheck check;
  check.threshold.key = "max_lost_frames";
  check.passed = passed;
  verdict.checks.push_back(check);
  return verdict;
}

TEST(PathFaults, FailingFlowsBesidePassingSiblingsNameThePathNotTheHosts) {
  const std::vector<StreamVerdict> streams{flow("a", "b", 1, true),  flow("a", "b", 2, false), flow("a", "b", 3, true),
                                           flow("a", "b", 4, false), flow("b", "a", 1, true),  flow("b", "a", 2, true)};
  const auto signs = path_fault_signs(streams);
  ASSERT_EQ(signs.size(), 1u);
  EXPECT_EQ(signs[0].receiver, "a");
  EXPECT_EQ(signs[0].sender, "b");
  EXPECT_EQ(signs[0].failing, (std::vector<std::size_t>{1, 3}));
  EXPECT_EQ(signs[0].passing, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(signs[0].text(streams),
            "a from b: 2 of 4 flows fail (rx:b/2 (192.168.102.10:49153 > 192.168.101.10:34997 udp), rx:b/4 "
            "(192.168.102.10:49155 > 192.168.101.10:34997 udp)) while their 2 siblings between the same hosts pass: a "
            "fault on the paths those flows take (a link or switch between the hosts), not at either host");
}

TEST(PathFaults, AllFailingOrAllPassingOrALoneFlowIsNoSign) {
  // Every flow failing points at a host or its cable as much as at a path: no sign.
  EXPECT_TRUE(path_fault_signs({flow("a", "b", 1, false), flow("a", "b", 2, false)}).empty());
  EXPECT_TRUE(path_fault_signs({flow("a", "b", 1, true), flow("a", "b", 2, true)}).empty());
  EXPECT_TRUE(path_fault_signs({flow("a", "b", 1, false), flow("a", "c", 1, true)}).empty());
  // A sender's own count is no sibling.
  EXPECT_TRUE(path_fault_signs({flow("a", "b", 1, false), flow("a", "b", 2, true, "tx")}).empty());
}

// An RDMA host's NIC counters name the peers whose traffic crossed the port, and a NIC that
// retransmits fails them: that is the port's, not one flow beside its siblings. An RDMA flow is
// its sender's stream, so its sign reads receiver from sender all the same.
TEST(PathFaults, ANicsCountersAreNoSiblingAndAFlowOnItsSendersSideIsOrientedByItsPeer) {
  StreamVerdict nic = flow("a", "b", 0, false, "nic");
  nic.stream.clear_flow();
  EXPECT_TRUE(path_fault_signs({nic, flow("a", "b", 1, true, "sink"), flow("a", "b", 2, true, "sink")}).empty());

  const std::vector<StreamVerdict> qps{flow("a", "b", 1, true, "flow"), flow("a", "b", 2, false, "flow"), nic,
                                       flow("b", "a", 1, true, "sink"), flow("b", "a", 2, true, "sink")};
  const auto signs = path_fault_signs(qps);
  ASSERT_EQ(signs.size(), 1u);
  EXPECT_EQ(signs[0].receiver, "b");
  EXPECT_EQ(signs[0].sender, "a");
  EXPECT_EQ(signs[0].failing, (std::vector<std::size_t>{1}));
  EXPECT_EQ(signs[0].passing, (std::vector<std::size_t>{0}));
  EXPECT_EQ(signs[0].text(qps).rfind("b from a: 1 of 2 flows fail (rx:b/2 ", 0), 0u) << signs[0].text(qps);
}

}  // namespace
}  // namespace tusk
