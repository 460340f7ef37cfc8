// The agent's runner against a controller's StartAt: a start within reach arms the test; one
// further ahead than any controller needs is refused with an event, and the test stays prepared.
#include "agent/test_runner.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <vector>

#include "common/clock.hpp"

namespace tusk {
namespace {

class IdleEngine final : public Engine {
 public:
  void prepare(const proto::Plan&, EngineEventSink) override {}
  void start(std::int64_t) override {}
  std::vector<proto::StreamCounters> sample() override { return {}; }
  void stop() noexcept override {}
};

struct RunnerFixture {
  RunnerFixture() {
    engines.engines["dpdk"] = {[] { return std::make_unique<IdleEngine>(); },
                               [](const proto::Plan&) { return 1e6; }};
  }
  proto::Plan plan() const {
    proto::Plan p;
    p.set_run_id("run");
    p.set_engine("dpdk");
    p.set_duration_ms(1000);
    p.set_sample_interval_ms(1000);
    p.set_max_rate_bps(1e9);
    return p;
  }
  proto::StartAt start_in(std::chrono::nanoseconds ahead) const {
    proto::StartAt start;
    start.set_run_id("run");
    start.set_agent_start_ns(realtime_ns() + ahead.count());
    return start;
  }

  boost::asio::io_context io;
  EngineCatalog engines;
  std::vector<proto::Record> records;
  TestRunner runner{io.get_executor(), engines, [this](proto::Record r) { records.push_back(std::move(r)); }};
};

TEST(TestRunner, AStartWithinReachArmsTheTest) {
  RunnerFixture f;
  ASSERT_TRUE(f.runner.on_plan(f.plan()).ok());
  f.runner.on_start_at(f.start_in(std::chrono::seconds(30)));
  EXPECT_EQ(f.runner.state().phase(), proto::AgentState::ARMED);
}

TEST(TestRunner, AStartFurtherAheadThanAnyControllerNeedsIsRefusedWithAnEvent) {
  RunnerFixture f;
  ASSERT_TRUE(f.runner.on_plan(f.plan()).ok());
  f.runner.on_start_at(f.start_in(std::chrono::hours(24 * 365)));
  f.io.poll();
  EXPECT_EQ(f.runner.state().phase(), proto::AgentState::PREPARED);
  ASSERT_EQ(f.records.size(), 1u);
  EXPECT_NE(f.records[0].event().message().find("start refused"), std::string::npos) << f.records[0].DebugString();
}

}  // namespace
}  // namespace tusk
