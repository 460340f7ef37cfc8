#include "agent/dpdk/idle_port_listener.hpp"

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <spdlog/spdlog.h>

#include <array>
#include <utility>

#include "agent/dpdk/neighbour_resolver.hpp"
#include "agent/lldp/lldp_frame.hpp"

namespace tusk::dpdk {

void hear_lldp(lldp::HeardNeighbours& heard, const Port& port, const std::uint8_t* frame, std::size_t length) {
  if (!lldp::is_lldp_frame(frame, length)) return;
  const lldp::LldpFrameParse parsed = lldp::parse_lldp_frame(frame, length);
  if (!parsed.neighbour) {
    heard.rejected();
    return;
  }
  const LldpNeighbour& neighbour = *parsed.neighbour;
  if (!heard.heard(port.name(), neighbour)) return;
  const std::string& who = neighbour.system_name.empty() ? neighbour.chassis_id : neighbour.system_name;
  if (neighbour.ttl_s == 0) {
    spdlog::info("DPDK port {}: LLDP neighbour {} port {} left (its shutdown LLDPDU)", port.name(), who,
                 neighbour.port_id);
  } else {
    spdlog::info("DPDK port {}: LLDP neighbour {} port {} (its own frames, TTL {} s)", port.name(), who,
                 neighbour.port_id, neighbour.ttl_s);
  }
}

IdlePortListener::IdlePortListener(std::vector<Port*> ports, std::vector<Ipv4Interface> addresses)
    : ports_(std::move(ports)), addresses_(std::move(addresses)), thread_([this] { listen(); }) {
  addresses_.resize(ports_.size());
}

IdlePortListener::~IdlePortListener() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

IdlePortListener::Pause::Pause(IdlePortListener& listener) : listener_(listener) {
  std::unique_lock lock(listener_.mutex_);
  ++listener_.pauses_;
  listener_.changed_.wait(lock, [this] { return !listener_.polling_; });
}

IdlePortListener::Pause::~Pause() {
  {
    std::lock_guard lock(listener_.mutex_);
    --listener_.pauses_;
  }
  listener_.changed_.notify_all();
}

void IdlePortListener::listen() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    changed_.wait_for(lock, kIdlePoll, [this] { return stopping_; });
    if (stopping_ || pauses_ > 0) continue;
    polling_ = true;
    lock.unlock();
    poll_ports();
    lock.lock();
    polling_ = false;
    changed_.notify_all();
  }
}

void IdlePortListener::poll_ports() {
  std::array<rte_mbuf*, kBurst> burst{};
  // A chained frame is read whole into this (an LLDPDU is at most 1500 bytes; more is not one).
  std::array<std::uint8_t, 1518> linear{};
  for (std::size_t p = 0; p < ports_.size(); ++p) {
    Port& port = *ports_[p];
    for (std::uint16_t queue = 0; queue < port.queues(); ++queue) {
      // What piled up since the last poll, up to a ring's worth: the rest waits for the next.
      for (int bursts = 0; bursts < 64; ++bursts) {
        const std::uint16_t got = rte_eth_rx_burst(port.id(), queue, burst.data(), kBurst);
        for (std::uint16_t i = 0; i < got; ++i) {
          const std::uint32_t length = rte_pktmbuf_pkt_len(burst[i]);
          if (length <= linear.size()) {
            const auto* data = static_cast<const std::uint8_t*>(rte_pktmbuf_read(burst[i], 0, length, linear.data()));
            if (data) hear_lldp(heard_, port, data, length);
          }
        }
        if (addresses_[p].address != 0) answer_frames_for_us(port, addresses_[p], burst.data(), got);
        for (std::uint16_t i = 0; i < got; ++i) rte_pktmbuf_free(burst[i]);
        if (got < kBurst) break;
      }
    }
  }
}

}  // namespace tusk::dpdk
