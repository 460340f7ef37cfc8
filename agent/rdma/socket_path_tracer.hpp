// Path tracing for flows whose address the kernel owns (RoCEv2 QPs): the same paced probes as the
// DPDK engine's (PathTracer), sent from a UDP socket bound to the flow's source address and UDP
// source port, to its destination and port (4791 for a QP), with the TTL set per probe. The
// kernel hands the routers' ICMP answers back on the socket's error queue (IP_RECVERR): who
// answered (the offender), time-exceeded or unreachable, and the probe's payload as quoted.
//
// One thread, started by start() and joined by stop() (or the destructor); hops() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/path/path_tracer.hpp"

namespace tusk::rdma {

// A socket descriptor, closed when this goes.
class UniqueSocket {
 public:
  explicit UniqueSocket(int fd = -1) : fd_(fd) {}
  ~UniqueSocket();
  UniqueSocket(UniqueSocket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  UniqueSocket& operator=(UniqueSocket&& other) noexcept;
  UniqueSocket(const UniqueSocket&) = delete;
  UniqueSocket& operator=(const UniqueSocket&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

struct SocketFlow {
  std::string src_address, dst_address;  // IPv4, dotted quad
  std::uint16_t src_port = 0, dst_port = 0;
};

class SocketPathTracer {
 public:
  // A flow whose socket cannot be opened or bound (an address not ours, a port in use) is left
  // untraced and named in problems().
  SocketPathTracer(const std::vector<SocketFlow>& flows, double probes_per_second, std::uint8_t max_ttl);
  ~SocketPathTracer();
  SocketPathTracer(const SocketPathTracer&) = delete;
  SocketPathTracer& operator=(const SocketPathTracer&) = delete;

  void start();
  void stop() noexcept;
  // Flow `index` (in the constructor's order): its hops so far; empty when untraced.
  std::vector<path::TracedHop> hops(std::size_t index) const;
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  void loop();
  void drain_errors(std::size_t traced);

  std::vector<UniqueSocket> sockets_;        // one per traced flow
  std::vector<std::size_t> traced_of_flow_;  // constructor index -> traced index, or npos
  std::vector<path::TracedFlow> traced_;
  std::unique_ptr<path::PathTracer> tracer_;
  std::vector<std::string> problems_;
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace tusk::rdma
