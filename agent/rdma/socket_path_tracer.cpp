#include "agent/rdma/socket_path_tracer.hpp"

#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>

#include "agent/path/ipv4_address.hpp"
#include "common/clock.hpp"

namespace tusk::rdma {
namespace {

constexpr std::size_t kUntraced = std::numeric_limits<std::size_t>::max();

sockaddr_in socket_address(std::uint32_t address, std::uint16_t port) {
  sockaddr_in out{};
  out.sin_family = AF_INET;
  out.sin_addr.s_addr = htonl(address);
  out.sin_port = htons(port);
  return out;
}

}  // namespace

UniqueSocket::~UniqueSocket() {
  if (fd_ >= 0) ::close(fd_);
}

UniqueSocket& UniqueSocket::operator=(UniqueSocket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

SocketPathTracer::SocketPathTracer(const std::vector<SocketFlow>& flows, double probes_per_second,
                                   std::uint8_t max_ttl) {
  for (const SocketFlow& flow : flows) {
    traced_of_flow_.push_back(kUntraced);
    const auto source = path::parse_ipv4(flow.src_address);
    const auto destination = path::parse_ipv4(flow.dst_address);
    const std::string name =
        fmt::format("{}:{} > {}:{}", flow.src_address, flow.src_port, flow.dst_address, flow.dst_port);
    if (!source || !destination || flow.src_port == 0 || flow.dst_port == 0) {
      problems_.push_back(fmt::format("flow {}: not an IPv4 flow, not traced", name));
      continue;
    }
    UniqueSocket socket(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    const int on = 1;
    const sockaddr_in local = socket_address(*source, flow.src_port);
    const sockaddr_in remote = socket_address(*destination, flow.dst_port);
    const char* step = nullptr;
    if (socket.get() < 0) {
      step = "socket";
    } else if (setsockopt(socket.get(), SOL_IP, IP_RECVERR, &on, sizeof on) != 0) {
      step = "IP_RECVERR";
    } else if (bind(socket.get(), reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0) {
      step = "bind";
    } else if (connect(socket.get(), reinterpret_cast<const sockaddr*>(&remote), sizeof remote) != 0) {
      step = "connect";
    }
    if (step != nullptr) {
      problems_.push_back(fmt::format("flow {}: {} failed: {}; not traced", name, step, std::strerror(errno)));
      continue;
    }
    traced_of_flow_.back() = traced_.size();
    traced_.push_back({*destination, flow.src_port});
    sockets_.push_back(std::move(socket));
  }
  tracer_ = std::make_unique<path::PathTracer>(traced_, probes_per_second, max_ttl);
}

SocketPathTracer::~SocketPathTracer() {
  stop();
}

void SocketPathTracer::start() {
  if (!tracer_->enabled() || running_.exchange(true)) return;
  thread_ = std::thread([this] { loop(); });
}

void SocketPathTracer::stop() noexcept {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

std::vector<path::TracedHop> SocketPathTracer::hops(std::size_t index) const {
  if (index >= traced_of_flow_.size() || traced_of_flow_[index] == kUntraced) return {};
  return tracer_->hops(traced_of_flow_[index]);
}

void SocketPathTracer::loop() {
  std::vector<pollfd> polled(sockets_.size());
  for (std::size_t i = 0; i < sockets_.size(); ++i) polled[i] = {sockets_[i].get(), POLLERR, 0};
  std::uint8_t payload[path::kProbePayloadLength];
  while (running_) {
    while (const auto probe = tracer_->next_probe(realtime_ns())) {
      const int socket = sockets_[probe->flow].get();
      const int ttl = probe->ttl;
      path::write_probe_payload(probe->ttl, payload);
      // A probe the kernel refuses (no route, a full buffer) is lost like one dropped on the way.
      if (setsockopt(socket, SOL_IP, IP_TTL, &ttl, sizeof ttl) == 0) {
        (void)::send(socket, payload, sizeof payload, MSG_DONTWAIT);
      }
    }
    if (::poll(polled.data(), polled.size(), 1) <= 0) continue;
    for (std::size_t i = 0; i < polled.size(); ++i) {
      if (polled[i].revents & POLLERR) drain_errors(i);
    }
  }
}

void SocketPathTracer::drain_errors(std::size_t traced) {
  for (;;) {
    std::uint8_t quoted[512];
    alignas(cmsghdr) char control[512];
    sockaddr_in destination{};
    iovec io{quoted, sizeof quoted};
    msghdr message{};
    message.msg_name = &destination;
    message.msg_namelen = sizeof destination;
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    const ssize_t got = ::recvmsg(sockets_[traced].get(), &message, MSG_ERRQUEUE | MSG_DONTWAIT);
    if (got < 0) return;
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
      if (c->cmsg_level != SOL_IP || c->cmsg_type != IP_RECVERR) continue;
      const auto* error = reinterpret_cast<const sock_extended_err*>(CMSG_DATA(c));
      if (error->ee_origin != SO_EE_ORIGIN_ICMP) continue;
      // What came back is our payload as the router quoted it: its TTL byte names the probe.
      if (got < 5) continue;
      path::ProbeReply reply;
      reply.ttl = quoted[4];
      if (reply.ttl == 0 || reply.ttl > path::kMaxProbeTtl) continue;
      const auto* offender = reinterpret_cast<const sockaddr_in*>(SO_EE_OFFENDER(error));
      reply.responder = offender->sin_family == AF_INET ? ntohl(offender->sin_addr.s_addr) : 0;
      reply.dst_address = traced_[traced].dst_address;
      reply.src_port = traced_[traced].src_port;
      if (error->ee_type == ICMP_TIME_EXCEEDED) {
        reply.answer = path::ProbeAnswer::TimeExceeded;
      } else if (error->ee_type == ICMP_DEST_UNREACH) {
        reply.answer = error->ee_code == ICMP_PORT_UNREACH && reply.responder == reply.dst_address
                           ? path::ProbeAnswer::Destination
                           : path::ProbeAnswer::Unreachable;
      } else {
        continue;
      }
      if (static_cast<std::size_t>(got) >= path::kProbePayloadLength) {
        std::uint8_t expected[path::kProbePayloadLength];
        path::write_probe_payload(reply.ttl, expected);
        reply.damaged = std::memcmp(expected, quoted, sizeof expected) != 0;
      }
      if (reply.responder != 0) tracer_->on_reply(reply);
    }
  }
}

}  // namespace tusk::rdma
