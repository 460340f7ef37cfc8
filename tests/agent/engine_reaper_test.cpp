// The reaper gives engines back off the io thread: an engine whose release waits on the kernel (a
// soft-RoCE QP's destroy) holds up neither the test's result nor the next plan, and a slow release
// is told with the test it belonged to.
#include "agent/engine_reaper.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "agent/plan_runner.hpp"
#include "common/clock.hpp"

namespace tusk {
namespace {

// Its release() waits until `free` is set, as a QP's destroy waits for its packets in flight.
class HeldEngine final : public Engine {
 public:
  HeldEngine(std::shared_future<void> free, std::atomic<int>& released) : free_(std::move(free)), released_(released) {}
  void prepare(const proto::Plan&, EngineEventSink) override {}
  void start(std::int64_t) override {}
  std::vector<proto::StreamCounters> sample() override { return {}; }
  void stop() noexcept override {}
  void release() noexcept override {
    if (done_) return;
    free_.wait();
    done_ = true;
    ++released_;
  }
  ~HeldEngine() override { release(); }

 private:
  std::shared_future<void> free_;
  std::atomic<int>& released_;
  bool done_ = false;
};

// `slow` 0: every release is told, so what is checked is which test it names, never a time.
TEST(EngineReaper, ReleasesEachEngineOnItsOwnThreadAndTellsASlowOneWithItsTest) {
  std::promise<void> free;
  std::shared_future<void> freed = free.get_future().share();
  std::atomic<int> released{0};
  std::mutex told_mutex;
  std::vector<RetiredTest> told;
  {
    EngineReaper reaper(std::chrono::milliseconds(0), [&](const RetiredTest& test, std::chrono::milliseconds) {
      std::lock_guard lock(told_mutex);
      told.push_back(test);
    });
    reaper.retire(std::make_unique<HeldEngine>(freed, released), {"run-7", 3, "rdma"});
    reaper.retire(std::make_unique<HeldEngine>(freed, released), {"run-7", 4, "rdma"});
    EXPECT_EQ(reaper.unreleased(), 2u);  // retire() returned while both wait on the "kernel"
    EXPECT_EQ(released.load(), 0);
    free.set_value();
  }  // the destructor waits for both
  EXPECT_EQ(released.load(), 2);
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[0].run_id, "run-7");
  EXPECT_EQ(told[0].test_index, 3);
  EXPECT_EQ(told[0].engine, "rdma");
  EXPECT_EQ(told[1].test_index, 4);
}

TEST(EngineReaper, AQuickReleaseIsNotTold) {
  bool told = false;
  {
    EngineReaper reaper(std::chrono::seconds(5),
                        [&told](const RetiredTest&, std::chrono::milliseconds) { told = true; });
    std::promise<void> free;
    free.set_value();
    std::atomic<int> released{0};
    reaper.retire(std::make_unique<HeldEngine>(free.get_future().share(), released), {"run", 0, "dpdk"});
  }
  EXPECT_FALSE(told);
}

// The agent's io thread goes on while the last test's engine is still being given back: its result
// is sent, its next plan prepared and answered, and heartbeats (any timer on the io thread) keep
// their time. Before, the engine was destroyed on the io thread, and an rxe QP whose destroy waited
// on the kernel silenced the agent until its controller counted it lost.
TEST(PlanRunner, AnEngineStillGivingItsResourcesBackHoldsUpNeitherTheResultNorTheNextPlan) {
  std::promise<void> free;
  std::shared_future<void> freed = free.get_future().share();
  std::atomic<int> released{0};
  boost::asio::io_context io;
  EngineCatalog engines;
  engines.engines["rdma"] = {
      [&] { return std::make_unique<HeldEngine>(freed, released); }, [](const proto::Plan&) { return 1e6; }, {}};
  std::vector<proto::Record> records;
  {
    PlanRunner runner(io.get_executor(), engines, [&records](proto::Record r) { records.push_back(std::move(r)); });
    proto::Plan plan;
    plan.set_run_id("run");
    plan.set_engine("rdma");
    plan.set_duration_ms(100);
    plan.set_sample_interval_ms(100);
    plan.set_max_rate_bps(1e9);
    std::optional<proto::PlanAck> answer;
    runner.on_plan(plan, [&answer](proto::PlanAck ack) { answer = std::move(ack); });
    ASSERT_TRUE(answer && answer->ok()) << (answer ? answer->error() : "no answer");
    proto::StartAt start;
    start.set_run_id("run");
    start.set_agent_start_ns(realtime_ns() + 20'000'000);
    runner.on_start_at(start);
    io.run_for(std::chrono::seconds(5));  // returns once the test is over: no timer is left
    ASSERT_FALSE(records.empty());
    EXPECT_TRUE(records.back().has_result()) << records.back().DebugString();
    EXPECT_EQ(released.load(), 0);

    plan.set_test_index(1);
    answer.reset();
    runner.on_plan(plan, [&answer](proto::PlanAck ack) { answer = std::move(ack); });
    ASSERT_TRUE(answer && answer->ok()) << (answer ? answer->error() : "no answer");
    EXPECT_EQ(runner.state().phase(), proto::AgentState::PREPARED);
    EXPECT_EQ(released.load(), 0);
    free.set_value();
  }
  EXPECT_EQ(released.load(), 2);
}

}  // namespace
}  // namespace tusk
