// One simulated agent: a real TLS connection speaking the real protocol (hello, heartbeats, clock
// echoes, plan acks, samples on the plan's interval, a result), with counters made up from the
// plan's rate instead of traffic. It measures the controller, so it does the least it can.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstddef>
#include <deque>
#include <memory>
#include <string>

#include "agent/sample_compactor.hpp"
#include "bench/controller_scale/agent_certificates.hpp"
#include "bench/controller_scale/fleet_metrics.hpp"
#include "common/connection.hpp"
#include "common/endpoint.hpp"

namespace tusk::bench {

class SimAgent;

// The agents of one io thread that are dialling: at most `limit` handshakes at once, as a rack's
// hosts come up over a moment rather than in one instant. Without it, one thread's burst of
// finished handshakes (about 2 ms of CPU each) queues its registered agents' heartbeats behind
// seconds of work, past the controller's silence limit, and the bench measures itself.
class DialQueue {
 public:
  explicit DialQueue(std::size_t limit) : limit_(limit) {}
  void request(SimAgent& agent);  // dials now, or when a slot frees
  void release();                 // a dial ended: registered, or failed before it was

 private:
  std::size_t limit_;
  std::size_t in_flight_ = 0;
  std::deque<SimAgent*> waiting_;
};

class SimAgent {
 public:
  SimAgent(boost::asio::io_context& io, std::string name, AgentCertificates& certificates, HostPort controller,
           FleetMetrics& metrics, DialQueue& dials);
  SimAgent(const SimAgent&) = delete;
  SimAgent& operator=(const SimAgent&) = delete;

  void connect();  // through the DialQueue
  void heartbeat();
  bool finished() const { return finished_; }

 private:
  friend class DialQueue;
  void dial();
  void dial_ended();
  void on_message(proto::Envelope& message);
  void on_start_at(const proto::StartAt& start);
  void send_sample();
  void send_result();
  std::vector<proto::StreamCounters> streams(double elapsed_s) const;
  void send_record(proto::Record record);

  boost::asio::io_context& io_;
  std::string name_;
  AgentCertificates& certificates_;
  HostPort controller_;
  FleetMetrics& metrics_;
  DialQueue& dials_;
  bool dialling_ = false;  // holds one of dials_'s slots
  std::shared_ptr<Connection> connection_;
  boost::asio::steady_timer timer_;
  proto::Plan plan_;
  SampleCompactor compactor_;
  std::int64_t start_ns_ = 0;
  std::uint32_t samples_sent_ = 0;
  std::uint64_t next_seq_ = 1;
  bool registered_ = false;
  bool finished_ = false;
};

}  // namespace tusk::bench
