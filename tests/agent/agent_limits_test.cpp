// The limits an agent holds every controller to: no plan makes it busy-loop, run past its own
// caps or keep sending long after the controller went quiet, whatever the plan or HelloAck says.
#include "agent/agent_limits.hpp"

#include <gtest/gtest.h>

namespace tusk {
namespace {

using namespace std::chrono_literals;

proto::Plan plan(std::uint32_t duration_ms = 10'000, std::uint32_t sample_interval_ms = 1000) {
  proto::Plan p;
  p.set_duration_ms(duration_ms);
  p.set_sample_interval_ms(sample_interval_ms);
  return p;
}

std::string refusal(const proto::Plan& p, double capped_bps, const AgentLimits& limits = {}) {
  return plan_beyond_limits(p, capped_bps, limits).value_or("");
}

// Before: sample_interval_ms 0 made the agent sample in a busy loop.
TEST(AgentLimits, APlanSampledTooOftenOrTooRarelyOrOfNoLengthIsRefused) {
  EXPECT_NE(refusal(plan(10'000, 0), 1e9).find("sample interval 0 ms is outside 100..60000 ms"), std::string::npos);
  EXPECT_NE(refusal(plan(10'000, 60'001), 1e9).find("sample interval"), std::string::npos);
  EXPECT_NE(refusal(plan(0, 1000), 1e9).find("duration 0 ms"), std::string::npos);
  EXPECT_EQ(refusal(plan(10'000, 100), 1e9), "");
}

TEST(AgentLimits, TheTighterOfThePlansCapAndTheAgentsOwnHolds) {
  AgentLimits limits;
  limits.max_rate_bps = 1e9;
  proto::Plan p = plan();
  EXPECT_EQ(refusal(p, 1e9, limits), "");
  EXPECT_NE(refusal(p, 1.5e9, limits).find("over this agent's --max-rate"), std::string::npos);
  // Before: a plan with no cap (0) turned the agent's check off; its own cap still holds.
  EXPECT_NE(refusal(p, 0, limits).find("line rate"), std::string::npos);
  p.set_max_rate_bps(0.5e9);
  EXPECT_NE(refusal(p, 0.8e9, limits).find("over the plan's safety cap"), std::string::npos);
  EXPECT_EQ(refusal(plan(), 0), "");  // no cap anywhere: line rate is allowed
}

TEST(AgentLimits, ATestLongerThanEitherDurationCapIsRefused) {
  AgentLimits limits;
  limits.max_duration = 60s;
  EXPECT_NE(refusal(plan(61'000), 1e9, limits).find("--max-duration"), std::string::npos);
  proto::Plan p = plan(30'000);
  p.set_max_duration_ms(20'000);
  EXPECT_NE(refusal(p, 1e9, limits).find("plan's safety cap (20000 ms)"), std::string::npos);
  EXPECT_EQ(refusal(plan(60'000), 1e9, limits), "");
}

// Before: any lease was taken as asked; an hour's lease kept traffic going an hour after the
// controller died.
TEST(AgentLimits, TheLeaseIsHeldBetweenThreeHundredMillisecondsAndTheAgentsMaximum) {
  AgentLimits limits;  // --max-lease 30 s
  EXPECT_EQ(bounded_lease(3'600'000, 3s, limits), 30s);
  EXPECT_EQ(bounded_lease(1, 3s, limits), 300ms);
  EXPECT_EQ(bounded_lease(5000, 3s, limits), 5s);
  EXPECT_EQ(bounded_lease(0, 3s, limits), 3s);  // none asked: unchanged
  limits.max_lease = 1s;
  EXPECT_EQ(bounded_lease(3000, 3s, limits), 1s);
}

TEST(AgentLimits, HeartbeatsComeOftenEnoughForTheLeaseAndNeverInABusyLoop) {
  EXPECT_EQ(bounded_heartbeat(0, 3s), 1s);
  EXPECT_EQ(bounded_heartbeat(1, 3s), 100ms);
  EXPECT_EQ(bounded_heartbeat(3'600'000, 3s), 1s);  // a third of the lease
  EXPECT_EQ(bounded_heartbeat(3'600'000, 300s), 10s);
  EXPECT_EQ(bounded_heartbeat(500, 300ms), 100ms);
}

}  // namespace
}  // namespace tusk
