// Spreading a test over a port's queues and the agent's CPUs (--dpdk-queues, a test's queues:).
#include "agent/dpdk/queue_plan.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/latency_histogram.hpp"

using namespace tusk::dpdk;

namespace {

std::string refusal(const QueuePlanInput& input) {
  try {
    plan_queues(input);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(QueuePlan, OneQueueOnOneCpuFloatsAsBefore) {
  const auto plan = plan_queues({0, 1, {0}, true, "p"});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].rx_queues, (std::vector<std::uint16_t>{0}));
  EXPECT_EQ(plan[0].tx_queue, 0);
  EXPECT_FALSE(plan[0].rx_cpu.has_value());
  EXPECT_FALSE(plan[0].tx_cpu.has_value());
}

TEST(QueuePlan, EveryQueueOfThePortByDefaultEachPinnedToItsOwnRxAndTxCpu) {
  const auto plan = plan_queues({0, 2, {2, 3, 4, 5}, true, "p"});
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].rx_queues, (std::vector<std::uint16_t>{0}));
  EXPECT_EQ(plan[1].rx_queues, (std::vector<std::uint16_t>{1}));
  EXPECT_EQ(plan[0].tx_queue, 0);
  EXPECT_EQ(plan[1].tx_queue, 1);
  EXPECT_EQ(plan[0].rx_cpu, 2);
  EXPECT_EQ(plan[1].rx_cpu, 3);
  EXPECT_EQ(plan[0].tx_cpu, 5);
  EXPECT_EQ(plan[1].tx_cpu, 4);
}

TEST(QueuePlan, FewerWorkersThanQueuesStillPollEveryRxQueue) {
  // A queue nobody polled would drop the flows the hash puts there.
  const auto plan = plan_queues({2, 5, {0, 1, 2, 3}, true, "p"});
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].rx_queues, (std::vector<std::uint16_t>{0, 2, 4}));
  EXPECT_EQ(plan[1].rx_queues, (std::vector<std::uint16_t>{1, 3}));
}

TEST(QueuePlan, RefusesMoreQueuesThanThePortHasAndSaysWhichFlag) {
  EXPECT_EQ(refusal({4, 2, {0, 1, 2, 3, 4, 5, 6, 7}, true, "net_af_packet0"}),
            "DPDK port net_af_packet0: the test asks for 4 queues and the port has 2: start the agent with "
            "--dpdk-queues 4");
}

TEST(QueuePlan, RefusesToOversubscribeTheCpuList) {
  EXPECT_EQ(refusal({3, 4, {0, 1, 2, 3, 4}, true, "p"}),
            "DPDK port p: 3 queues need 6 CPUs, one RX and one TX thread each, and --dpdk-lcores gives 5: give more "
            "CPUs or ask for fewer queues");
  // Sleeping threads may share: that is what --idle-sleep-us is for, but pinned ones never do.
  EXPECT_NE(refusal({3, 4, {0, 1, 2, 3, 4}, false, "p"}), "");
}

TEST(QueuePlan, SeveralBusyPollingQueuesOnOneCpuAreRefusedSleepingOnesShare) {
  EXPECT_EQ(refusal({2, 2, {0}, true, "p"}),
            "DPDK port p: 2 queues busy-poll 4 threads, and --dpdk-lcores gives one CPU: give 4 CPUs, or share cores "
            "with --idle-sleep-us");
  const auto plan = plan_queues({2, 2, {0}, false, "p"});
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_FALSE(plan[1].rx_cpu.has_value());
}

TEST(QueuePlan, EachWorkerSendsEveryNthFlow) {
  EXPECT_EQ(targets_of_worker(5, 2, 0), (std::vector<std::size_t>{0, 2, 4}));
  EXPECT_EQ(targets_of_worker(5, 2, 1), (std::vector<std::size_t>{1, 3}));
  EXPECT_TRUE(targets_of_worker(1, 2, 1).empty());
}

TEST(QueuePlan, AfPacketGetsQpairsAndAQpairsGivenMustAgree) {
  EXPECT_EQ(vdev_for_queues("net_af_packet0,iface=lab0", 2), "net_af_packet0,iface=lab0,qpairs=2");
  EXPECT_EQ(vdev_for_queues("net_af_packet0,iface=lab0,qpairs=2", 2), "net_af_packet0,iface=lab0,qpairs=2");
  EXPECT_EQ(vdev_for_queues("net_af_packet0,iface=lab0", 0), "net_af_packet0,iface=lab0");
  EXPECT_EQ(vdev_for_queues("net_pcap0,iface=x", 2), "net_pcap0,iface=x");
  EXPECT_THROW(vdev_for_queues("net_af_packet0,iface=lab0,qpairs=4", 2), std::invalid_argument);
  EXPECT_THROW(vdev_for_queues("net_af_packet0,iface=lab0,qpairs=x", 0), std::invalid_argument);
  EXPECT_EQ(port_queues("net_af_packet0,iface=lab0,qpairs=3", 0), 3);
  EXPECT_EQ(port_queues("net_af_packet0,iface=lab0", 0), 1);
  EXPECT_EQ(port_queues("", 4), 4);
}

TEST(QueuePlan, AStreamSplitOverQueuesHasItsLatencyBoundedFromAbove) {
  tusk::LatencySummary a{10, 100, 200, 900, 990, 1000, 300};
  tusk::LatencySummary b{30, 50, 400, 500, 600, 700, 500};
  const auto whole = tusk::merge_summaries({a, b, tusk::LatencySummary{}});
  EXPECT_EQ(whole.count, 40u);
  EXPECT_EQ(whole.min_ns, 50u);
  EXPECT_EQ(whole.max_ns, 1000u);
  EXPECT_EQ(whole.p50_ns, 400u);
  EXPECT_EQ(whole.p99_ns, 900u);
  EXPECT_DOUBLE_EQ(whole.mean_ns, (10 * 300.0 + 30 * 500.0) / 40);
}
