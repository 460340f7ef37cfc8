// The lease: an agent that hears nothing from its controller stops its traffic by itself.
// Wired as in the agent: LeaseWatchdog expiry → PlanRunner::stop_now → engine stopped.
#include "agent/lease_watchdog.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/dpdk/send_rate.hpp"
#include "agent/plan_runner.hpp"
#include "common/clock.hpp"

namespace tusk {
namespace {

using namespace std::chrono_literals;

// Test double: remembers what the runner asked of it.
class RecordingEngine final : public Engine {
 public:
  explicit RecordingEngine(int& stops) : stops_(stops) {}
  void prepare(const proto::Plan&, EngineEventSink) override {}
  void start(std::int64_t) override { started_ = true; }
  std::vector<proto::StreamCounters> sample() override { return {}; }
  void stop() noexcept override {
    if (started_) ++stops_;
    started_ = false;
  }

 private:
  int& stops_;
  bool started_ = false;
};

class LeaseTest : public ::testing::Test {
 protected:
  LeaseTest()
      : runner_(io_.get_executor(), catalog(), [this](proto::Record record) { records_.push_back(std::move(record)); }),
        lease_(io_.get_executor(), 200ms,
               [this] { runner_.stop_now(proto::AgentEvent::LEASE_EXPIRED, "no word from the controller"); }) {}

  const EngineCatalog& catalog() {
    // The real engine's rate, so the safety cap is held to what the DPDK engine would send.
    catalog_.engines["dpdk"] = {
        [this] { return std::make_unique<RecordingEngine>(stops_); }, dpdk::capped_bit_rate, {}};
    return catalog_;
  }

  // The plan's answer: this double is ready as soon as prepared, so it comes before on_plan returns.
  proto::PlanAck prepare(const proto::Plan& plan) {
    proto::PlanAck answer;
    runner_.on_plan(plan, [&answer](proto::PlanAck ack) { answer = std::move(ack); });
    return answer;
  }

  // A 60 s test that starts now.
  void start_long_test() {
    proto::Plan plan;
    plan.set_run_id("run");
    plan.set_test_index(0);
    plan.set_engine("dpdk");
    plan.set_duration_ms(60'000);
    plan.set_sample_interval_ms(1000);
    plan.mutable_dpdk()->set_rate_pps(1000);
    plan.mutable_dpdk()->set_frame_size(1000);  // the engine's own checks refuse a plan without one
    ASSERT_TRUE(prepare(plan).ok());
    proto::StartAt start;
    start.set_run_id("run");
    start.set_test_index(0);
    start.set_agent_start_ns(realtime_ns());
    runner_.on_start_at(start);
  }

  void run_for(std::chrono::milliseconds time) {
    io_.restart();
    io_.run_for(time);
  }

  const proto::TestResult* result() const {
    for (const auto& record : records_) {
      if (record.has_result()) return &record.result();
    }
    return nullptr;
  }

  boost::asio::io_context io_;
  EngineCatalog catalog_;
  int stops_ = 0;
  std::vector<proto::Record> records_;
  PlanRunner runner_;
  LeaseWatchdog lease_;
};

TEST_F(LeaseTest, SilenceForTheLeaseStopsTheEngineAndSaysWhy) {
  start_long_test();
  lease_.renew();
  run_for(1500ms);  // far past the 200 ms lease, far short of the 60 s test
  EXPECT_TRUE(lease_.expired());
  EXPECT_EQ(stops_, 1);
  EXPECT_FALSE(runner_.traffic_running());
  bool event_seen = false;
  for (const auto& record : records_) {
    if (record.has_event() && record.event().kind() == proto::AgentEvent::LEASE_EXPIRED) event_seen = true;
  }
  EXPECT_TRUE(event_seen);
  ASSERT_NE(result(), nullptr);
  EXPECT_FALSE(result()->completed());
  EXPECT_EQ(result()->stop_reason(), "no word from the controller");
}

TEST_F(LeaseTest, RenewalsKeepTrafficRunning) {
  start_long_test();
  lease_.renew();
  boost::asio::steady_timer renewer(io_);
  int renewals = 0;
  std::function<void()> renew_again = [&] {
    lease_.renew();
    if (++renewals < 20) {
      renewer.expires_after(50ms);
      renewer.async_wait([&](boost::system::error_code ec) {
        if (!ec) renew_again();
      });
    }
  };
  renew_again();
  run_for(900ms);  // 20 renewals 50 ms apart cover this
  EXPECT_FALSE(lease_.expired());
  EXPECT_TRUE(runner_.traffic_running());
  EXPECT_EQ(stops_, 0);
}

TEST_F(LeaseTest, ExpiryWhileIdleStopsNothingAndRecordsNothing) {
  lease_.renew();
  run_for(500ms);
  EXPECT_TRUE(lease_.expired());
  EXPECT_EQ(stops_, 0);
  EXPECT_TRUE(records_.empty());
}

// The agent holds a plan to the safety cap on what the engine will really send, whatever the
// controller worked out: a size list replaces frame_size, and a packet rate counts its largest frame.
TEST_F(LeaseTest, APlanOverTheSafetyCapIsRefusedOnTheFramesTheEngineWouldSend) {
  proto::Plan plan;
  plan.set_run_id("run");
  plan.set_test_index(0);
  plan.set_engine("dpdk");
  plan.set_duration_ms(1000);
  plan.set_sample_interval_ms(1000);
  plan.set_max_rate_bps(1e9);
  auto& dpdk = *plan.mutable_dpdk();
  dpdk.set_frame_size(64);
  dpdk.add_frame_sizes(1500);
  dpdk.set_rate_pps(100'000);  // 100 kpps of 1500 B is 1.2 Gbit/s; of 64 B it would be 51 Mbit/s
  const auto refused = prepare(plan);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("over the plan's safety cap"), std::string::npos) << refused.error();
  dpdk.set_rate_pps(80'000);  // 960 Mbit/s of 1500 B frames
  EXPECT_TRUE(prepare(plan).ok());
}

}  // namespace
}  // namespace tusk
