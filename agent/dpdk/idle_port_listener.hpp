// The agent's DPDK ports between tests, when no engine polls them: a thread of their own reads
// what arrives every kIdlePoll, so the LLDP neighbour a port's own frames announce is known (a
// DPDK port has no kernel, so no lldpd, to ask) and the port's address answers ARP and ping as a
// host's would. A test's engine pauses it for the test's whole life (Pause) and takes over the
// port's queues; its RX thread keeps the neighbours heard as LLDP frames come.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "agent/dpdk/neighbour.hpp"
#include "agent/dpdk/port.hpp"
#include "agent/lldp/heard_neighbours.hpp"

struct rte_mbuf;

namespace tusk::dpdk {

// An LLDP frame on `port` becomes what it heard (a frame that does not parse, a count); any other
// is left alone. Callable from any thread that polls the port.
void hear_lldp(lldp::HeardNeighbours& heard, const Port& port, const std::uint8_t* frame, std::size_t length);

class IdlePortListener {
 public:
  // LLDP sends every 30 s by default; a tenth of a second keeps a port's ring from filling.
  static constexpr auto kIdlePoll = std::chrono::milliseconds(100);

  // `ports` outlive the listener; `addresses` in the same order (a port without one answers no ARP).
  IdlePortListener(std::vector<Port*> ports, std::vector<Ipv4Interface> addresses);
  ~IdlePortListener();
  IdlePortListener(const IdlePortListener&) = delete;
  IdlePortListener& operator=(const IdlePortListener&) = delete;

  // While one is held the listener touches no port: made once a poll under way is over.
  class Pause {
   public:
    explicit Pause(IdlePortListener& listener);
    ~Pause();
    Pause(const Pause&) = delete;
    Pause& operator=(const Pause&) = delete;

   private:
    IdlePortListener& listener_;
  };

  lldp::HeardNeighbours& heard() { return heard_; }

 private:
  void listen();
  void poll_ports();

  std::vector<Port*> ports_;
  std::vector<Ipv4Interface> addresses_;
  lldp::HeardNeighbours heard_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int pauses_ = 0;
  bool polling_ = false;
  bool stopping_ = false;
  std::thread thread_;  // last: it starts once everything above is made
};

}  // namespace tusk::dpdk
