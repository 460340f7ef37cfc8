#include "bench/controller_scale/sim_agent.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>

#include "common/clock.hpp"
#include "common/counter_names.hpp"
#include "common/version.hpp"

namespace tusk::bench {
namespace asio = boost::asio;

void DialQueue::request(SimAgent& agent) {
  if (in_flight_ < limit_) {
    ++in_flight_;
    agent.dial();
  } else {
    waiting_.push_back(&agent);
  }
}

void DialQueue::release() {
  if (!waiting_.empty()) {
    SimAgent* next = waiting_.front();
    waiting_.pop_front();
    next->dial();  // takes over the freed slot
  } else if (in_flight_ > 0) {
    --in_flight_;
  }
}

SimAgent::SimAgent(asio::io_context& io, std::string name, AgentCertificates& certificates, HostPort controller,
                   FleetMetrics& metrics, DialQueue& dials)
    : io_(io),
      name_(std::move(name)),
      certificates_(certificates),
      controller_(std::move(controller)),
      metrics_(metrics),
      dials_(dials),
      timer_(io) {}

void SimAgent::connect() {
  dials_.request(*this);
}

void SimAgent::dial_ended() {
  if (!dialling_) return;
  dialling_ = false;
  dials_.release();
}

void SimAgent::dial() {
  dialling_ = true;
  auto socket = std::make_shared<asio::ip::tcp::socket>(io_);
  const asio::ip::tcp::endpoint endpoint(asio::ip::make_address(controller_.host), controller_.port);
  socket->async_connect(endpoint, [this, socket](boost::system::error_code ec) {
    if (ec) {
      // The listen queue was full or the controller refused: dial again, as an agent would.
      dial_ended();
      timer_.expires_after(std::chrono::milliseconds(200));
      timer_.async_wait([this](boost::system::error_code wait_ec) {
        if (!wait_ec) connect();
      });
      return;
    }
    connection_ = Connection::create(std::move(*socket), &certificates_.context(), Connection::Limits{});
    certificates_.present(connection_->tls_handle(), name_);
    connection_->start_as_client(
        controller_.host, [this](proto::Envelope& message) { on_message(message); },
        [this](const std::string&) {
          if (!finished_) {
            metrics_.disconnects.fetch_add(1, std::memory_order_relaxed);
            if (!registered_) {  // refused before the hello was answered (e.g. too many pending): again
              dial_ended();
              timer_.expires_after(std::chrono::milliseconds(500));
              timer_.async_wait([this](boost::system::error_code wait_ec) {
                if (!wait_ec) connect();
              });
            }
          }
        });
    proto::Envelope envelope;
    auto* hello = envelope.mutable_hello();
    hello->set_protocol_version(kProtocolVersion);
    hello->set_agent_name(name_);
    hello->set_agent_instance(std::hash<std::string>{}(name_));
    hello->mutable_state()->set_first_unacked_seq(1);
    auto* inventory = hello->mutable_inventory();
    inventory->set_hostname(name_);
    inventory->add_engines("dpdk");
    auto* port = inventory->add_dpdk_ports();
    port->set_name("net_af_packet0");
    port->set_driver("net_af_packet");
    port->set_mac("02:00:00:00:00:01");
    connection_->send(envelope);
  });
}

void SimAgent::heartbeat() {
  if (!registered_ || !connection_ || !connection_->is_open()) return;
  if (connection_->sent_within(std::chrono::seconds(1))) return;  // as the real agent does
  proto::Envelope envelope;
  envelope.mutable_heartbeat()->set_sender_time_ns(realtime_ns());
  connection_->send(envelope);
}

void SimAgent::on_message(proto::Envelope& message) {
  const std::int64_t received_ns = realtime_ns();
  switch (message.body_case()) {
    case proto::Envelope::kHelloAck:
      registered_ = true;
      metrics_.registered.note(steady_ns());
      dial_ended();
      break;
    case proto::Envelope::kClockProbe: {
      metrics_.probes.note(steady_ns());
      proto::Envelope reply;
      auto* echo = reply.mutable_clock_echo();
      echo->set_probe_id(message.clock_probe().probe_id());
      echo->set_controller_send_ns(message.clock_probe().controller_send_ns());
      echo->set_agent_receive_ns(received_ns);
      echo->set_agent_send_ns(realtime_ns());
      connection_->send(reply);
      break;
    }
    case proto::Envelope::kPlan: {
      metrics_.plans.note(steady_ns());
      plan_ = message.plan();
      compactor_ = SampleCompactor{};
      proto::Envelope reply;
      reply.mutable_plan_ack()->set_run_id(plan_.run_id());
      reply.mutable_plan_ack()->set_test_index(plan_.test_index());
      reply.mutable_plan_ack()->set_ok(true);
      connection_->send(reply);
      metrics_.plan_acks.note(steady_ns());
      break;
    }
    case proto::Envelope::kStartAt:
      on_start_at(message.start_at());
      break;
    case proto::Envelope::kError:
      metrics_.refusals.fetch_add(1, std::memory_order_relaxed);
      break;
    default:
      break;  // heartbeats, record acks (nothing is resent here), stops
  }
}

void SimAgent::on_start_at(const proto::StartAt& start) {
  if (start_ns_ != 0) return;  // a resent StartAt
  start_ns_ = start.agent_start_ns();
  metrics_.planned_starts.note(start_ns_);
  const std::int64_t wait_ns = start_ns_ - realtime_ns();
  if (wait_ns < 0) metrics_.late_start_orders.fetch_add(1, std::memory_order_relaxed);
  timer_.expires_after(std::chrono::nanoseconds(std::max<std::int64_t>(wait_ns, 0)));
  timer_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    metrics_.actual_starts.note(realtime_ns());
    send_sample();
  });
}

std::vector<proto::StreamCounters> SimAgent::streams(double elapsed_s) const {
  const double pps = plan_.has_dpdk() && plan_.dpdk().rate_pps() > 0 ? plan_.dpdk().rate_pps() : 1000;
  const std::uint64_t frame = plan_.has_dpdk() && plan_.dpdk().frame_size() > 0 ? plan_.dpdk().frame_size() : 1000;
  const auto frames = static_cast<std::uint64_t>(pps * elapsed_s);
  std::vector<proto::StreamCounters> out;
  for (const auto& peer : plan_.senders()) {
    proto::StreamCounters stream;
    stream.set_stream_id("from-" + peer.agent_name());
    stream.set_peer(peer.agent_name());
    auto& counters = *stream.mutable_counters();
    counters[std::string(counters::kRxFrames)] = frames;
    counters[std::string(counters::kRxBytes)] = frames * frame;
    counters[std::string(counters::kLostFrames)] = 0;
    counters[std::string(counters::kBitsCompared)] = frames * frame * 8;
    counters[std::string(counters::kBitErrors)] = 0;
    out.push_back(std::move(stream));
  }
  return out;
}

void SimAgent::send_sample() {
  const auto interval = std::chrono::milliseconds(std::max<std::uint32_t>(plan_.sample_interval_ms(), 1));
  const auto duration = std::chrono::milliseconds(plan_.duration_ms());
  if ((samples_sent_ + 1) * interval > duration) {
    send_result();
    return;
  }
  ++samples_sent_;
  const auto elapsed = samples_sent_ * interval;
  proto::Record record;
  auto* sample = record.mutable_sample();
  sample->set_run_id(plan_.run_id());
  sample->set_test_index(plan_.test_index());
  sample->set_index(samples_sent_);
  sample->set_agent_time_ns(realtime_ns());
  sample->set_elapsed_ms(static_cast<std::uint64_t>(elapsed.count()));
  // On the wire as the real agent sends it: names in a stream's layout samples, values alone between.
  for (auto& stream : streams(elapsed.count() / 1e3)) {
    compactor_.compact(stream);
    *sample->add_streams() = std::move(stream);
  }
  metrics_.stream_samples.fetch_add(static_cast<std::uint64_t>(sample->streams_size()), std::memory_order_relaxed);
  metrics_.sample_bytes.fetch_add(record.ByteSizeLong(), std::memory_order_relaxed);
  send_record(std::move(record));
  metrics_.samples.note(steady_ns());
  // Samples fall on the planned grid, as the real runner's do, however late this one was sent.
  const std::int64_t next_ns = start_ns_ + std::chrono::nanoseconds(elapsed + interval).count();
  timer_.expires_after(std::chrono::nanoseconds(std::max<std::int64_t>(next_ns - realtime_ns(), 0)));
  timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) send_sample();
  });
}

void SimAgent::send_result() {
  proto::Record record;
  auto* result = record.mutable_result();
  result->set_run_id(plan_.run_id());
  result->set_test_index(plan_.test_index());
  result->set_completed(true);
  result->set_stop_reason("duration");
  result->set_actual_start_agent_ns(start_ns_);
  result->set_actual_stop_agent_ns(start_ns_ + std::int64_t{plan_.duration_ms()} * 1'000'000);
  result->set_samples(samples_sent_);
  for (auto& stream : streams(plan_.duration_ms() / 1e3)) *result->add_streams() = std::move(stream);
  send_record(std::move(record));
  metrics_.results.note(steady_ns());
  finished_ = true;
}

void SimAgent::send_record(proto::Record record) {
  if (!connection_ || !connection_->is_open()) return;
  record.set_seq(next_seq_++);
  proto::Envelope envelope;
  *envelope.mutable_records()->add_records() = std::move(record);
  connection_->send(envelope);
}

}  // namespace tusk::bench
