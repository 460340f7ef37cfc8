// Runs the controller's plans on this agent's engines, one test at a time, on the io thread:
// prepares the engine, starts it at the agreed instant, samples it every interval, stops it at the
// end of its duration (or earlier: Stop, lease expiry, engine fault), and turns all of it into
// Records for the outbox.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_limits.hpp"
#include "agent/engine.hpp"
#include "agent/engine_reaper.hpp"
#include "agent/optics/port_optics_reading.hpp"
#include "agent/sample_compactor.hpp"
#include "tusk.pb.h"

namespace tusk {

class PlanRunner {
 public:
  using RecordSink = std::function<void(proto::Record record)>;

  PlanRunner(boost::asio::any_io_executor executor, const EngineCatalog& engines, RecordSink sink,
             AgentLimits limits = {}, optics::EthtoolSource ethtool = {});
  ~PlanRunner();

  using PlanAnswer = std::function<void(proto::PlanAck ack)>;

  // Prepares the plan's engine and answers whether it can run: at once, or once the engine's
  // background set-up is over (Engine::ready; an RDMA engine connecting its QPs), so the start
  // time the controller picks after every answer finds nothing left to set up. A repeat of the
  // plan in hand (the controller resending after a reconnect) is answered again without
  // re-preparing; one that arrives while it is still preparing is answered when the first is.
  void on_plan(const proto::Plan& plan, PlanAnswer answer);
  void on_start_at(const proto::StartAt& start);
  void on_stop(const proto::Stop& stop);
  // Stops any traffic now, e.g. because the lease ran out; records an event and the result.
  void stop_now(proto::AgentEvent::Kind kind, const std::string& reason);

  // Records an event against the test in hand (or the last one), e.g. a lost controller.
  void emit_event(proto::AgentEvent::Kind kind, const std::string& message, const std::string& stream_id = {});

  proto::AgentState state() const;
  bool traffic_running() const { return phase_ == proto::AgentState::RUNNING; }

 private:
  // Answers the plan once the engine is ready, polling it; refuses it if it takes longer than
  // kMostPrepareTime (the engine's own deadlines are shorter: this only guards against a bug).
  void await_ready(proto::PlanAck ack);
  void begin();
  void take_sample();
  void finish(bool completed, const std::string& reason);
  // The result waits for the ports' optics read at the end (Plan.read_optics), off this thread.
  void await_optics_then_send();
  // A result still waiting for its optics is sent now, with them: a new plan is not held up by
  // the last test's ethtool for longer than its deadlines.
  void send_held_result_now();
  void schedule_sample();
  std::int64_t start_ns_for_sample(std::uint32_t index) const;
  // Every Plan.optics_interval_ms while the test runs: sends the reading the last tick began (if
  // it is done) and begins the next, off this thread; a tick that finds its ethtool still reading
  // begins none.
  void schedule_optics_interval();
  void send_optics_interval(std::int64_t end_ns, std::vector<proto::PortOptics> ports);
  // Stops the engine in hand, if any, and hands it to the reaper, which gives its resources back
  // off this thread.
  void retire_engine();
  void report_slow_release(const RetiredTest& test, std::chrono::milliseconds took);
  void emit_event_for(const std::string& run_id, int test_index, proto::AgentEvent::Kind kind,
                      const std::string& message, const std::string& stream_id);

  boost::asio::any_io_executor executor_;
  const EngineCatalog& engines_;
  AgentLimits limits_;
  RecordSink sink_;
  boost::asio::steady_timer start_timer_;
  boost::asio::steady_timer sample_timer_;
  boost::asio::steady_timer end_timer_;
  boost::asio::steady_timer ready_timer_;
  boost::asio::steady_timer optics_timer_;
  boost::asio::steady_timer optics_interval_timer_;
  optics::EthtoolSource ethtool_;

  proto::Plan plan_;
  std::unique_ptr<Engine> engine_;
  proto::AgentState::Phase phase_ = proto::AgentState::IDLE;
  // Prepared but not yet ready: the plan's answer waits in pending_answers_ (phase_ stays IDLE).
  bool preparing_ = false;
  std::vector<PlanAnswer> pending_answers_;
  std::int64_t prepare_deadline_ns_ = 0;
  std::int64_t start_ns_ = 0;
  std::int64_t actual_start_ns_ = 0;
  std::uint32_t samples_taken_ = 0;
  SampleCompactor compactor_;  // made anew for each test
  // The test's optics: read as it prepares (a start the controller waits for with the engine's
  // set-up), and as it ends, before its result is sent.
  // During the test, the reading is shared with the one ethtool call under way (an interval's or
  // the end's, never both: the end waits for the interval).
  std::future<std::unique_ptr<optics::PortOpticsReading>> optics_start_;
  std::shared_ptr<optics::PortOpticsReading> optics_reading_;
  struct OpticsInterval {
    std::int64_t end_ns = 0;
    std::vector<proto::PortOptics> ports;
  };
  std::future<OpticsInterval> optics_interval_;
  std::uint32_t optics_intervals_sent_ = 0;
  struct OpticsEnd {
    std::optional<OpticsInterval> pending;  // an interval read when the test ended, not yet sent
    std::int64_t end_ns = 0;
    optics::PortOpticsReading::Finished finished;
  };
  std::future<OpticsEnd> optics_end_;
  std::optional<proto::Record> held_result_;
  // Lives as long as the runner; engine threads post events through it.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  // Last: its destructor waits for the engines it holds, whose events post through alive_.
  EngineReaper reaper_;
};

}  // namespace tusk
