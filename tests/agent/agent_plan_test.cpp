// A hostile controller's plans against the agent's engines, checked before any device is touched
// (agent/rdma/rdma_plan.hpp, agent/dpdk/dpdk_plan.hpp), and the RDMA data plane's check of who may
// connect. Each refusal names the field and its bound.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "agent/dpdk/dpdk_plan.hpp"
#include "agent/dpdk/send_rate.hpp"
#include "agent/engine.hpp"
#include "agent/rdma/rdma_plan.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;

proto::Plan rdma_plan() {
  proto::Plan plan;
  plan.set_engine("rdma");
  auto* peer = plan.add_peers();
  peer->set_agent_name("b");
  peer->set_address("10.0.0.2");
  auto* sender = plan.add_senders();
  sender->set_agent_name("c");
  sender->set_address("10.0.0.3");
  plan.mutable_rdma()->set_message_size(65536);
  plan.mutable_rdma()->set_data_check(true);
  return plan;
}

std::string refusal(const std::function<void(proto::Plan&)>& change, proto::Plan plan = rdma_plan()) {
  change(plan);
  try {
    if (plan.has_rdma()) {
      rdma::resolve_rdma_plan(plan);
    } else {
      dpdk::check_dpdk_plan(plan);
    }
  } catch (const EngineError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(RdmaPlan, AnHonestPlanIsAcceptedWithItsDefaultsResolved) {
  const proto::RdmaTest test = rdma::resolve_rdma_plan(rdma_plan());
  EXPECT_EQ(test.operation(), "write");
  EXPECT_EQ(test.outstanding(), 16u);
  EXPECT_EQ(test.qps_per_peer(), 1u);
  EXPECT_EQ(test.signal_every(), 1u);
  EXPECT_EQ(test.recovery(), "stop");
  EXPECT_EQ(test.pacing(), "auto");
  EXPECT_EQ(test.cm_port(), rdma::kDefaultCmPort);
  EXPECT_EQ(test.check_every(), 1u);  // an older controller's plan: every payload
}

// Before: message_size 2^32 + 8 passed the 64-bit header check, became an 8-byte slot, and the
// 24-byte header of a checked message was written past it.
TEST(RdmaPlan, MessageSizesAreCheckedAsTheyArriveBeforeTheyBecomeThirtyTwoBits) {
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_rdma()->set_message_size((std::uint64_t{1} << 32) + 8); }),
              HasSubstr("message_size 4294967304 is out of range (at most 1073741824)"));
  // Before: 0 with a rate divided by zero in the pacing.
  EXPECT_THAT(refusal([](proto::Plan& p) {
                p.mutable_rdma()->set_message_size(0);
                p.mutable_rdma()->set_rate_bps(1e9);
              }),
              HasSubstr("message_size 0"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_rdma()->set_message_size(8); }),
              HasSubstr("cannot hold the 24 B header"));
}

TEST(RdmaPlan, CountsAreBoundedByTheMemoryTheyWouldPin) {
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_rdma()->set_qps_per_peer(1'000'000); }),
              HasSubstr("qps_per_peer 1000000 is out of range (at most 1024)"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_rdma()->set_outstanding(4'000'000'000u); }),
              HasSubstr("outstanding 4000000000 is out of range"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_rdma()->set_check_every(65'537); }),
              HasSubstr("check_every 65537 is out of range (at most 65536)"));
  // Each bound alone is met; together they would pin 2 x 1024 x 16384 x 64 KiB.
  EXPECT_THAT(refusal([](proto::Plan& p) {
                p.mutable_rdma()->set_qps_per_peer(1024);
                p.mutable_rdma()->set_outstanding(8192);
              }),
              HasSubstr("would pin 2048 GiB, more than 32 GiB"));
  EXPECT_THAT(refusal([](proto::Plan& p) {
                for (int i = 0; i < 5000; ++i) p.add_peers()->set_agent_name("x");
              }),
              HasSubstr("peers 5001 is out of range"));
}

TEST(RdmaPlan, EveryOtherNumberIsHeldToWhatItIsStoredInOrMeans) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THAT(refusal([&](proto::Plan& p) { p.mutable_rdma()->set_rate_bps(nan); }), HasSubstr("rate_bps nan"));
  EXPECT_THAT(refusal([&](proto::Plan& p) { p.mutable_rdma()->set_rate_bps(-1); }), HasSubstr("rate_bps -1"));
  EXPECT_THAT(refusal([&](proto::Plan& p) { p.mutable_rdma()->set_trace_rate(inf); }), HasSubstr("trace_rate inf"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_rdma()->set_burst_duty(2); }), HasSubstr("burst_duty 2"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_rdma()->set_traffic_class(256); }),
              HasSubstr("traffic_class 256"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_rdma()->set_port(300); }), HasSubstr("port 300"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_rdma()->set_ack_timeout(32); }), HasSubstr("ack_timeout 32"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_rdma()->set_cm_port(70000); }), HasSubstr("cm_port 70000"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_rdma()->set_path_mtu(1500); }), HasSubstr("path_mtu 1500"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_rdma()->set_inline_threshold(1u << 20); }),
              HasSubstr("inline_threshold 1048576"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_rdma()->set_rails(17); }), HasSubstr("17 rails"));
  EXPECT_THAT(refusal([](proto::Plan& p) {
                p.mutable_rdma()->set_collective("all_reduce");
                p.mutable_rdma()->set_steps(10);
                p.mutable_rdma()->set_step_period_ms(100);
                p.mutable_rdma()->set_compute_ms(200);
              }),
              HasSubstr("compute_ms 200 is out of range (at most 100)"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_rdma()->set_operation("atomic"); }),
              HasSubstr("unknown RDMA operation 'atomic'"));
}

// Before: the shipped RDMA profiles set ib_port, gid_index and path_mtu, which the engine never
// looked at; validate, plan and run were silent. rdma_cm takes all three from the route: a route
// that does not give what the profile asks for is refused, with what it gives and what to change.
TEST(RdmaRoute, TheProfilesPortGidAndPathMtuAreCheckedAgainstTheResolvedRoute) {
  proto::RdmaTest test;
  rdma::ResolvedRoute route;
  route.port = 1;
  route.source_gid = "::ffff:10.99.12.1";
  route.gid_at_profile_index = "::ffff:10.99.12.1";
  route.active_mtu = 4096;
  EXPECT_EQ(rdma::refuse_route(test, route), std::nullopt) << "nothing asked, nothing refused";
  test.set_port(1);
  test.set_gid_index(3);
  test.set_path_mtu(4096);
  EXPECT_EQ(rdma::refuse_route(test, route), std::nullopt);

  test.set_port(2);
  EXPECT_THAT(rdma::refuse_route(test, route).value_or(""),
              ::testing::HasSubstr("goes through port 1, not the profile's ib_port 2"));
  test.set_port(1);

  route.gid_at_profile_index = "fe80::5054:ff:fe99:12";  // index 3 holds the link-local GID here
  EXPECT_THAT(rdma::refuse_route(test, route).value_or(""),
              ::testing::HasSubstr("leaves from GID ::ffff:10.99.12.1, not from the profile's gid_index 3 "
                                   "(fe80::5054:ff:fe99:12)"));
  route.gid_at_profile_index.reset();  // the index is past the table: nothing to compare
  EXPECT_EQ(rdma::refuse_route(test, route), std::nullopt);

  route.active_mtu = 1024;
  EXPECT_THAT(rdma::refuse_route(test, route).value_or(""),
              ::testing::HasSubstr("would run at path MTU 1024 (rdma_cm's, the port's active MTU), not the profile's "
                                   "path_mtu 4096: raise the interface's MTU"));
  test.set_path_mtu(512);
  EXPECT_THAT(rdma::refuse_route(test, route).value_or(""),
              ::testing::HasSubstr("lower the interface's MTU or raise path_mtu"));
}

TEST(DpdkPlan, NumbersOfAPlanAreBoundedBeforeAnyPortIsTouched) {
  proto::Plan plan;
  plan.set_engine("dpdk");
  plan.add_peers()->set_agent_name("b");
  plan.mutable_dpdk()->set_frame_size(1000);
  EXPECT_EQ(refusal([](proto::Plan&) {}, plan), "accepted");
  // Before: flows_per_peer 2^32 - 1 from source port 2 wrapped the last port to 0 and passed.
  EXPECT_THAT(refusal(
                  [](proto::Plan& p) {
                    p.mutable_dpdk()->set_udp_source_port(2);
                    p.mutable_dpdk()->set_flows_per_peer(0xFFFFFFFFu);
                  },
                  plan),
              HasSubstr("flows_per_peer 4294967295 is out of range"));
  EXPECT_THAT(refusal(
                  [](proto::Plan& p) {
                    p.mutable_dpdk()->set_udp_source_port(65500);
                    p.mutable_dpdk()->set_flows_per_peer(100);
                  },
                  plan),
              HasSubstr("the last flow's UDP source port 65599"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_dpdk()->set_frame_size(0); }, plan), HasSubstr("no frame size"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_dpdk()->set_frame_size(70000); }, plan),
              HasSubstr("frame_size 70000"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_dpdk()->set_rate_pps(std::nan("")); }, plan),
              HasSubstr("rate_pps nan"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_dpdk()->set_dscp(64); }, plan), HasSubstr("DSCP 64"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_dpdk()->set_encapsulation("mpls"); }, plan),
              HasSubstr("unknown encapsulation 'mpls'"));
  EXPECT_THAT(refusal([](proto::Plan& p) { p.mutable_dpdk()->set_queues(1000); }, plan), HasSubstr("queues 1000"));
  EXPECT_THAT(refusal(
                  [](proto::Plan& p) {
                    for (int i = 0; i < 40; ++i) p.add_senders()->set_agent_name("s");
                    p.mutable_dpdk()->set_flows_per_peer(64);
                  },
                  plan),
              HasSubstr("40 senders with 64 flows each are more than the 1024 streams"));
}

// Before: the agent worked out a plan's rate for the safety cap before checking the plan, so a frame
// size of 0 or a rate of NaN read as "line rate" and was refused by the cap, naming the wrong field.
TEST(DpdkPlan, TheRateHeldToTheSafetyCapIsWorkedOutOnlyFromAPlanThatPassedItsChecks) {
  proto::Plan plan;
  plan.set_engine("dpdk");
  plan.add_peers()->set_agent_name("b");
  plan.mutable_dpdk()->set_frame_size(1000);
  plan.mutable_dpdk()->set_rate_pps(1000);
  EXPECT_GT(dpdk::capped_bit_rate(plan), 0);
  const auto capped_refusal = [&](const std::function<void(proto::Plan&)>& change) {
    proto::Plan changed = plan;
    change(changed);
    try {
      dpdk::capped_bit_rate(changed);
    } catch (const EngineError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(capped_refusal([](proto::Plan& p) { p.mutable_dpdk()->set_frame_size(0); }), HasSubstr("no frame size"));
  EXPECT_THAT(capped_refusal([](proto::Plan& p) { p.mutable_dpdk()->set_rate_pps(std::nan("")); }),
              HasSubstr("rate_pps nan"));
  EXPECT_THAT(capped_refusal([](proto::Plan& p) { p.mutable_dpdk()->set_frame_size(1u << 31); }),
              HasSubstr("frame_size 2147483648 is out of range"));
}

// Before: any host on the fabric could connect, pin receive buffers, and with a real sender's name
// and flow id retire that sender's QP, a flow failure localisation then blamed on a healthy link.
TEST(RdmaConnectRequest, OnlyThePlansSendersFromTheirOwnAddressesWithTheirFlowsMayConnect) {
  proto::Plan plan = rdma_plan();
  plan.mutable_rdma()->set_qps_per_peer(4);
  EXPECT_EQ(rdma::refuse_connect_request(plan, {"c", 3, 0, "10.0.0.3"}), std::nullopt);
  EXPECT_THAT(rdma::refuse_connect_request(plan, {"c", 0, 0, ""}).value_or("accepted"),
              HasSubstr("it comes from an address rdma_cm did not give, not from c's address 10.0.0.3"));
  EXPECT_THAT(rdma::refuse_connect_request(plan, {"mallory", 0, 0, "10.0.0.66"}).value_or("accepted"),
              HasSubstr("'mallory' is not a sender of this test"));
  EXPECT_THAT(rdma::refuse_connect_request(plan, {"b", 0, 0, "10.0.0.2"}).value_or("accepted"),
              HasSubstr("'b' is not a sender"))
      << "a peer it sends to is not one that sends to it";
  EXPECT_THAT(rdma::refuse_connect_request(plan, {"c", 0, 0, "10.0.0.66"}).value_or("accepted"),
              HasSubstr("it comes from 10.0.0.66, not from c's address 10.0.0.3"));
  EXPECT_THAT(rdma::refuse_connect_request(plan, {"c", 4, 0, "10.0.0.3"}).value_or("accepted"),
              HasSubstr("flow 4 is not one of the 4"));
  EXPECT_THAT(rdma::refuse_connect_request(plan, {"c", 0, 1, "10.0.0.3"}).value_or("accepted"),
              HasSubstr("rail 0 of a plan with 0 rails"));
  // Before: a sender the plan knows no address of (its inventory listed no RoCE IPv4 GID) was
  // let in from anywhere.
  proto::Plan unaddressed = plan;
  unaddressed.mutable_senders(0)->clear_address();
  EXPECT_THAT(rdma::refuse_connect_request(unaddressed, {"c", 0, 0, "10.0.0.66"}).value_or("accepted"),
              HasSubstr("the plan has no RoCE IPv4 address of c (its inventory listed none), so a connection from "
                        "10.0.0.66 cannot be told to be its"));
  // With rails, each rail's address is the sender's on that rail.
  plan.mutable_rdma()->set_rails(2);
  plan.mutable_senders(0)->add_rail_addresses("10.0.0.3");
  plan.mutable_senders(0)->add_rail_addresses("10.1.0.3");
  EXPECT_EQ(rdma::refuse_connect_request(plan, {"c", 0, 2, "10.1.0.3"}), std::nullopt);
  EXPECT_THAT(rdma::refuse_connect_request(plan, {"c", 0, 2, "10.0.0.3"}).value_or("accepted"),
              HasSubstr("not from c's address 10.1.0.3"));
}

// Before: a planned sender could reconnect a flow without end, each accepted connection kept for
// the test. Now the plan's QPs (1 sender x 4 QPs x 2 rails here) and 65,536 reconnections.
TEST(RdmaConnectRequest, APlannedSenderReconnectsOnlySoOftenInATest) {
  proto::Plan plan = rdma_plan();
  plan.mutable_rdma()->set_qps_per_peer(4);
  plan.mutable_rdma()->set_rails(2);
  plan.mutable_senders(0)->add_rail_addresses("10.0.0.3");
  plan.mutable_senders(0)->add_rail_addresses("10.1.0.3");
  const auto request = [](std::uint64_t accepted_before) {
    return rdma::ConnectRequest{"c", 0, 1, "10.0.0.3", accepted_before};
  };
  EXPECT_EQ(rdma::refuse_connect_request(plan, request(8 + rdma::kMaxReconnectsPerTest - 1)), std::nullopt);
  EXPECT_THAT(rdma::refuse_connect_request(plan, request(8 + rdma::kMaxReconnectsPerTest)).value_or("accepted"),
              HasSubstr("this test accepted its plan's 8 QPs and 65536 reconnections already"));
}

}  // namespace
}  // namespace tusk
