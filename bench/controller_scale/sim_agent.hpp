// One simulated agent: a real TLS connection speaking the real protocol (hello, heartbeats, clock
// echoes, plan acks, samples on the plan's interval, a result), with counters made up from the
// plan's rate instead of traffic. It measures the controller, so it does the least it can.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>
#include <string>

#include "bench/controller_scale/agent_certificates.hpp"
#include "bench/controller_scale/fleet_metrics.hpp"
#include "common/connection.hpp"
#include "common/endpoint.hpp"

namespace tusk::bench {

class SimAgent {
 public:
  SimAgent(boost::asio::io_context& io, std::string name, AgentCertificates& certificates, HostPort controller,
           FleetMetrics& metrics);
  SimAgent(const SimAgent&) = delete;
  SimAgent& operator=(const SimAgent&) = delete;

  void connect();
  void heartbeat();
  bool finished() const { return finished_; }

 private:
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
  std::shared_ptr<Connection> connection_;
  boost::asio::steady_timer timer_;
  proto::Plan plan_;
  std::int64_t start_ns_ = 0;
  std::uint32_t samples_sent_ = 0;
  std::uint64_t next_seq_ = 1;
  bool registered_ = false;
  bool finished_ = false;
};

}  // namespace tusk::bench
