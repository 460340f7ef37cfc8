// The agent's handling of what a controller sends, without a socket: plans (checked against the
// engines' real rate caps and the agent's own limits), start times, stops, record acks and lease
// terms drive the real PlanRunner and RecordOutbox. The engine is a double that moves no
// traffic: the engines' datapaths are tested on real ports and verbs, not here.
#include <boost/asio/io_context.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/agent_limits.hpp"
#include "agent/dpdk/send_rate.hpp"
#include "agent/plan_runner.hpp"
#include "agent/rdma/rdma_engine.hpp"
#include "agent/record_outbox.hpp"
#include "common/framing.hpp"

namespace {

class QuietEngine final : public tusk::Engine {
 public:
  void prepare(const tusk::proto::Plan& plan, tusk::EngineEventSink) override { peers_ = plan.peers_size(); }
  void start(std::int64_t) override {}
  std::vector<tusk::proto::StreamCounters> sample() override {
    std::vector<tusk::proto::StreamCounters> streams(static_cast<std::size_t>(std::min(peers_, 64)));
    for (auto& stream : streams) (*stream.mutable_counters())["tx_frames"] = 1;
    return streams;
  }
  void stop() noexcept override {}

 private:
  int peers_ = 0;
};

const tusk::EngineCatalog& catalog() {
  static const tusk::EngineCatalog engines = [] {
    tusk::EngineCatalog c;
    c.engines["dpdk"] = {[] { return std::make_unique<QuietEngine>(); }, tusk::dpdk::capped_bit_rate, {}};
    c.engines["rdma"] = {[] { return std::make_unique<QuietEngine>(); }, tusk::rdma::capped_bit_rate, {}};
    return c;
  }();
  return engines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tusk;
  boost::asio::io_context io;
  RecordOutbox outbox(1000, 64u << 10);
  PlanRunner runner(
      io.get_executor(), catalog(), [&](proto::Record record) { outbox.add(std::move(record)); }, AgentLimits{});
  std::chrono::milliseconds lease{3000};
  framing::FrameDecoder decoder;
  decoder.feed(reinterpret_cast<const char*>(data), size);
  proto::Envelope message;
  std::string error;
  proto::RecordBatch batch;
  while (decoder.next(message, error) == framing::FrameDecoder::Status::Frame) {
    switch (message.body_case()) {
      case proto::Envelope::kHelloAck:
        lease = bounded_lease(message.hello_ack().lease_ms(), lease, AgentLimits{});
        (void)bounded_heartbeat(message.hello_ack().heartbeat_interval_ms(), lease);
        break;
      case proto::Envelope::kPlan:
        runner.on_plan(message.plan(), [](proto::PlanAck) {});
        break;
      case proto::Envelope::kStartAt:
        runner.on_start_at(message.start_at());
        break;
      case proto::Envelope::kStop:
        runner.on_stop(message.stop());
        break;
      case proto::Envelope::kRecordAck:
        outbox.acknowledge(message.record_ack().acked_through());
        break;
      default:
        break;
    }
    io.poll();
    while (outbox.take_unsent(batch, 256, 1u << 20)) {
    }
  }
  runner.stop_now(proto::AgentEvent::LEASE_EXPIRED, "fuzz input ended");
  io.poll();
  return 0;
}
