#include "agent/plan_runner.hpp"

#include <fmt/format.h>
#include <boost/asio/post.hpp>

#include <spdlog/spdlog.h>
#include <algorithm>

#include "common/clock.hpp"
#include "common/wire_bounds.hpp"

namespace tusk {
namespace asio = boost::asio;

namespace {

// Longer than any engine's own set-up deadline (the RDMA engine's is 20 s) and shorter than the
// controller's wait for every answer (30 s), so a stuck engine is refused by name.
constexpr std::int64_t kMostPrepareNs = 25'000'000'000;
constexpr auto kReadyPoll = std::chrono::milliseconds(10);
// A release this slow is the kernel's or the driver's trouble, worth a line in the report.
constexpr auto kSlowRelease = std::chrono::seconds(5);

template <typename T>
bool is_ready(const std::future<T>& future) {
  return !future.valid() || future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

}  // namespace

PlanRunner::PlanRunner(asio::any_io_executor executor, const EngineCatalog& engines, RecordSink sink,
                       AgentLimits limits, optics::EthtoolSource ethtool)
    : executor_(executor),
      engines_(engines),
      limits_(limits),
      sink_(std::move(sink)),
      start_timer_(executor),
      sample_timer_(executor),
      end_timer_(executor),
      ready_timer_(executor),
      optics_timer_(executor),
      optics_interval_timer_(executor),
      ethtool_(std::move(ethtool)),
      reaper_(kSlowRelease,
              [this, alive = std::weak_ptr<bool>(alive_)](const RetiredTest& test, std::chrono::milliseconds took) {
                asio::post(executor_, [this, alive, test, took] {
                  if (auto guard = alive.lock(); guard && *guard) report_slow_release(test, took);
                });
              }) {}

PlanRunner::~PlanRunner() {
  *alive_ = false;
  retire_engine();
}

proto::AgentState PlanRunner::state() const {
  proto::AgentState state;
  state.set_run_id(plan_.run_id());
  state.set_test_index(phase_ == proto::AgentState::IDLE ? -1 : plan_.test_index());
  state.set_phase(phase_);
  return state;
}

void PlanRunner::on_plan(const proto::Plan& plan, PlanAnswer answer) {
  proto::PlanAck ack;
  ack.set_run_id(plan.run_id());
  ack.set_test_index(plan.test_index());
  const bool same_test = plan.run_id() == plan_.run_id() && plan.test_index() == plan_.test_index();
  if (same_test && preparing_) {
    pending_answers_.push_back(std::move(answer));
    return;
  }
  if (same_test && phase_ != proto::AgentState::IDLE) {
    ack.set_ok(true);
    answer(std::move(ack));
    return;
  }
  if (preparing_ || phase_ == proto::AgentState::ARMED || phase_ == proto::AgentState::RUNNING) {
    ack.set_error(fmt::format("busy with run {} test {}", plan_.run_id(), plan_.test_index()));
    answer(std::move(ack));
    return;
  }
  const auto entry = engines_.engines.find(plan.engine());
  if (entry == engines_.engines.end()) {
    ack.set_error(fmt::format("this agent has no '{}' engine", plan.engine()));
    answer(std::move(ack));
    return;
  }
  // Safety caps are enforced here too, on what the engine will really send, so a wrong
  // controller cannot exceed them, nor this agent's own limits.
  // The engine checks the plan's bounds before it works out the rate: a malformed plan's rate
  // means nothing, and a refusal naming the cap ("line rate" for a frame size of 0) would send its
  // reader after the wrong field.
  double rate = 0;
  try {
    rate = entry->second.capped_bit_rate ? entry->second.capped_bit_rate(plan) : 0;
  } catch (const EngineError& e) {
    ack.set_error(fmt::format("{} engine could not prepare: {}", plan.engine(), e.what()));
    answer(std::move(ack));
    return;
  }
  if (auto beyond = plan_beyond_limits(plan, rate, limits_)) {
    ack.set_error(*beyond);
    answer(std::move(ack));
    return;
  }
  send_held_result_now();
  optics_start_ = {};  // a reading begun for a test that never ran (waits for its ethtool to end)
  optics_reading_.reset();
  optics_intervals_sent_ = 0;
  retire_engine();
  phase_ = proto::AgentState::IDLE;
  plan_ = plan;
  samples_taken_ = 0;
  compactor_ = SampleCompactor{};
  try {
    auto engine = entry->second.make();
    std::weak_ptr<bool> alive = alive_;
    // Named with its own test: an engine the reaper is still releasing may speak during the next one.
    engine->prepare(plan, [this, alive, run_id = plan.run_id(), test_index = plan.test_index()](
                              proto::AgentEvent::Kind kind, const std::string& message, const std::string& stream_id) {
      asio::post(executor_, [this, alive, run_id, test_index, kind, message, stream_id] {
        if (auto guard = alive.lock(); guard && *guard) emit_event_for(run_id, test_index, kind, message, stream_id);
      });
    });
    engine_ = std::move(engine);
    const auto& ports = entry->second.kernel_ports;
    if (plan.read_optics() && !ports.empty()) {
      optics_start_ = std::async(std::launch::async, [source = ethtool_, ports] {
        return std::make_unique<optics::PortOpticsReading>(source, ports);
      });
    }
  } catch (const std::exception& e) {
    ack.set_error(fmt::format("{} engine could not prepare: {}", plan.engine(), e.what()));
    answer(std::move(ack));
    return;
  }
  preparing_ = true;
  pending_answers_.assign(1, std::move(answer));
  prepare_deadline_ns_ = realtime_ns() + kMostPrepareNs;
  await_ready(std::move(ack));
}

void PlanRunner::await_ready(proto::PlanAck ack) {
  if (!preparing_) return;  // stopped meanwhile
  bool ready = false;
  try {
    ready = engine_->ready() && is_ready(optics_start_);
    if (!ready && realtime_ns() >= prepare_deadline_ns_) {
      throw EngineError(fmt::format("still not ready after {} s", kMostPrepareNs / 1'000'000'000));
    }
  } catch (const std::exception& e) {
    retire_engine();
    ack.set_error(fmt::format("{} engine could not prepare: {}", plan_.engine(), e.what()));
  }
  if (!ready && ack.error().empty()) {
    ready_timer_.expires_after(kReadyPoll);
    ready_timer_.async_wait([this, ack = std::move(ack)](boost::system::error_code ec) mutable {
      if (!ec) await_ready(std::move(ack));
    });
    return;
  }
  preparing_ = false;
  if (ready) {
    phase_ = proto::AgentState::PREPARED;
    ack.set_ok(true);
    spdlog::info("prepared test {} '{}' ({} engine, {} ms)", plan_.test_index(), plan_.test_name(), plan_.engine(),
                 plan_.duration_ms());
  }
  auto answers = std::move(pending_answers_);
  pending_answers_.clear();
  for (auto& answer : answers) answer(ack);
}

void PlanRunner::on_start_at(const proto::StartAt& start) {
  if (start.run_id() != plan_.run_id() || start.test_index() != plan_.test_index()) {
    spdlog::warn("start for run {} test {} ignored: prepared is run {} test {}", start.run_id(), start.test_index(),
                 plan_.run_id(), plan_.test_index());
    return;
  }
  if (phase_ != proto::AgentState::PREPARED) return;  // a resend of a start already taken
  const std::int64_t ahead_ns = start.agent_start_ns() - realtime_ns();
  if (ahead_ns > std::chrono::nanoseconds(wire::kMaxStartAhead).count()) {
    const auto why =
        fmt::format("start refused: it is {:.0f} s ahead, more than the {} s any controller needs", ahead_ns / 1e9,
                    std::chrono::duration_cast<std::chrono::seconds>(wire::kMaxStartAhead).count());
    spdlog::error("test {}: {}", plan_.test_index(), why);
    emit_event(proto::AgentEvent::NOTICE, why);
    return;
  }
  start_ns_ = start.agent_start_ns();
  phase_ = proto::AgentState::ARMED;
  spdlog::info("test {} armed to start in {:.3f} s", plan_.test_index(), (start_ns_ - realtime_ns()) / 1e9);
  start_timer_.expires_at(steady_from_realtime_ns(start_ns_));
  start_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec && phase_ == proto::AgentState::ARMED) begin();
  });
}

void PlanRunner::begin() {
  actual_start_ns_ = realtime_ns();
  if (optics_start_.valid()) optics_reading_ = optics_start_.get();  // ready: the answer waited for it
  try {
    engine_->start(start_ns_);
  } catch (const std::exception& e) {
    phase_ = proto::AgentState::RUNNING;  // so finish() records a result for this test
    emit_event(proto::AgentEvent::ENGINE_FAULT, e.what());
    finish(false, fmt::format("engine_fault: {}", e.what()));
    return;
  }
  phase_ = proto::AgentState::RUNNING;
  spdlog::info("test {} started (late by {} us)", plan_.test_index(), (actual_start_ns_ - start_ns_) / 1000);
  schedule_sample();
  if (optics_reading_ && plan_.optics_interval_ms() > 0) schedule_optics_interval();
  end_timer_.expires_at(steady_from_realtime_ns(start_ns_ + std::int64_t{plan_.duration_ms()} * 1'000'000));
  end_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec && phase_ == proto::AgentState::RUNNING) finish(true, "duration");
  });
}

std::int64_t PlanRunner::start_ns_for_sample(std::uint32_t index) const {
  return start_ns_ + std::int64_t{index} * plan_.sample_interval_ms() * 1'000'000;
}

void PlanRunner::schedule_sample() {
  const std::uint32_t next = samples_taken_ + 1;
  // The last interval's sample is taken by finish(), at the end of the duration.
  if (std::uint64_t{next} * plan_.sample_interval_ms() >= plan_.duration_ms()) return;
  sample_timer_.expires_at(steady_from_realtime_ns(start_ns_for_sample(next)));
  sample_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || phase_ != proto::AgentState::RUNNING) return;
    take_sample();
    schedule_sample();
  });
}

void PlanRunner::take_sample() {
  proto::Record record;
  auto* sample = record.mutable_sample();
  sample->set_run_id(plan_.run_id());
  sample->set_test_index(plan_.test_index());
  sample->set_index(++samples_taken_);
  const auto now = realtime_ns();
  sample->set_agent_time_ns(now);
  sample->set_elapsed_ms(static_cast<std::uint64_t>(std::max<std::int64_t>(0, now - start_ns_) / 1'000'000));
  for (auto& stream : engine_->sample()) {
    compactor_.compact(stream);
    *sample->add_streams() = std::move(stream);
  }
  sink_(std::move(record));
}

void PlanRunner::schedule_optics_interval() {
  const std::int64_t interval_ns =
      std::max<std::int64_t>(plan_.optics_interval_ms(), wire::kMinOpticsInterval.count()) * 1'000'000;
  const std::int64_t elapsed_ns = std::max<std::int64_t>(0, realtime_ns() - start_ns_);
  const std::int64_t next_ns = start_ns_ + (elapsed_ns / interval_ns + 1) * interval_ns;
  // The end reads the last interval itself.
  if (next_ns >= start_ns_ + std::int64_t{plan_.duration_ms()} * 1'000'000) return;
  optics_interval_timer_.expires_at(steady_from_realtime_ns(next_ns));
  optics_interval_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || phase_ != proto::AgentState::RUNNING) return;
    if (optics_interval_.valid() && is_ready(optics_interval_)) {
      OpticsInterval done = optics_interval_.get();
      send_optics_interval(done.end_ns, std::move(done.ports));
    }
    if (!optics_interval_.valid()) {
      optics_interval_ = std::async(std::launch::async, [reading = optics_reading_] {
        OpticsInterval interval;
        interval.ports = reading->interval();
        interval.end_ns = realtime_ns();
        return interval;
      });
    }
    schedule_optics_interval();
  });
}

void PlanRunner::send_optics_interval(std::int64_t end_ns, std::vector<proto::PortOptics> ports) {
  proto::Record record;
  auto* sample = record.mutable_optics();
  sample->set_run_id(plan_.run_id());
  sample->set_test_index(plan_.test_index());
  sample->set_index(++optics_intervals_sent_);
  sample->set_agent_time_ns(end_ns);
  for (auto& port : ports) *sample->add_ports() = std::move(port);
  sink_(std::move(record));
}

void PlanRunner::finish(bool completed, const std::string& reason) {
  if (phase_ != proto::AgentState::RUNNING) return;
  sample_timer_.cancel();
  end_timer_.cancel();
  optics_interval_timer_.cancel();
  take_sample();
  // The test's traffic ends here: the engine's stop then waits for frames in flight (100 ms for
  // DPDK), which is no part of the time the traffic had, so no part of its throughput's divisor.
  const std::int64_t stopped_ns = realtime_ns();
  engine_->stop();
  phase_ = proto::AgentState::FINISHED;

  proto::Record record;
  auto* result = record.mutable_result();
  result->set_run_id(plan_.run_id());
  result->set_test_index(plan_.test_index());
  result->set_completed(completed);
  result->set_stop_reason(reason);
  result->set_actual_start_agent_ns(actual_start_ns_);
  result->set_actual_stop_agent_ns(stopped_ns);
  result->set_samples(samples_taken_);
  for (auto& stream : engine_->sample()) *result->add_streams() = std::move(stream);
  retire_engine();
  spdlog::info("test {} finished: {} ({} samples)", plan_.test_index(), reason, samples_taken_);
  if (!optics_reading_) {
    sink_(std::move(record));
    return;
  }
  // After the interval under way, if any: the reading is one object, read by one thread at a time.
  optics_end_ = std::async(std::launch::async,
                           [reading = std::move(optics_reading_), pending = std::move(optics_interval_)]() mutable {
                             OpticsEnd end;
                             if (pending.valid()) end.pending = pending.get();
                             end.finished = reading->finish();
                             end.end_ns = realtime_ns();
                             return end;
                           });
  optics_reading_.reset();
  held_result_ = std::move(record);
  await_optics_then_send();
}

void PlanRunner::await_optics_then_send() {
  if (!held_result_) return;
  if (!is_ready(optics_end_)) {
    optics_timer_.expires_after(kReadyPoll);
    optics_timer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) await_optics_then_send();
    });
    return;
  }
  send_held_result_now();
}

void PlanRunner::send_held_result_now() {
  if (!held_result_) return;
  optics_timer_.cancel();
  proto::Record record = std::move(*held_result_);
  held_result_.reset();
  OpticsEnd end = optics_end_.get();
  if (end.pending) send_optics_interval(end.pending->end_ns, std::move(end.pending->ports));
  if (!end.finished.last_interval.empty()) send_optics_interval(end.end_ns, std::move(end.finished.last_interval));
  for (auto& port : end.finished.whole) *record.mutable_result()->add_optics() = std::move(port);
  sink_(std::move(record));
}

void PlanRunner::on_stop(const proto::Stop& stop) {
  if (stop.run_id() != plan_.run_id() || stop.test_index() != plan_.test_index()) return;
  const bool was_preparing = preparing_;
  if (preparing_) {  // the controller gave up waiting: no answer is wanted any more
    preparing_ = false;
    pending_answers_.clear();
    ready_timer_.cancel();
  }
  if (was_preparing || phase_ == proto::AgentState::ARMED || phase_ == proto::AgentState::PREPARED) {
    start_timer_.cancel();
    retire_engine();
    phase_ = proto::AgentState::FINISHED;
    return;
  }
  finish(false, stop.reason().empty() ? "stop" : "stop: " + stop.reason());
}

void PlanRunner::stop_now(proto::AgentEvent::Kind kind, const std::string& reason) {
  if (phase_ == proto::AgentState::ARMED) {
    start_timer_.cancel();
    retire_engine();
    phase_ = proto::AgentState::FINISHED;
    emit_event(kind, reason + " (before the test started)");
    return;
  }
  if (phase_ != proto::AgentState::RUNNING) return;
  emit_event(kind, reason);
  finish(false, reason);
}

void PlanRunner::retire_engine() {
  if (!engine_) return;
  engine_->stop();
  reaper_.retire(std::move(engine_), {plan_.run_id(), plan_.test_index(), plan_.engine()});
}

void PlanRunner::report_slow_release(const RetiredTest& test, std::chrono::milliseconds took) {
  emit_event_for(test.run_id, test.test_index, proto::AgentEvent::NOTICE,
                 fmt::format("the {} engine took {:.1f} s after the test to give its resources back to the kernel "
                             "(this agent went on answering meanwhile)",
                             test.engine, took.count() / 1e3),
                 {});
}

void PlanRunner::emit_event(proto::AgentEvent::Kind kind, const std::string& message, const std::string& stream_id) {
  emit_event_for(plan_.run_id(), plan_.test_index(), kind, message, stream_id);
}

void PlanRunner::emit_event_for(const std::string& run_id, int test_index, proto::AgentEvent::Kind kind,
                                const std::string& message, const std::string& stream_id) {
  proto::Record record;
  auto* event = record.mutable_event();
  event->set_run_id(run_id);
  event->set_test_index(test_index);
  event->set_agent_time_ns(realtime_ns());
  event->set_kind(kind);
  event->set_message(message);
  event->set_stream_id(stream_id);
  sink_(std::move(record));
}

}  // namespace tusk
