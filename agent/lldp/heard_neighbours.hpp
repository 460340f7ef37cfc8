// The LLDP neighbours a port's own frames announced (a DPDK port, which no kernel and so no lldpd
// sees): the last one heard on each port, until its TTL runs out, as 802.1AB ages them. Written by
// whichever thread polls the port (the idle listener, a test's RX thread), read by the agent's
// io thread for its registration: thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/lldp_neighbour.hpp"

namespace tusk::lldp {

class HeardNeighbours {
 public:
  using Clock = std::chrono::steady_clock;

  // What `port` heard at `at`. A TTL of 0 is the sender's shutdown LLDPDU: the neighbour is gone.
  // True when that changes the port's neighbour (a new one, another one, or gone).
  bool heard(const std::string& port, const LldpNeighbour& neighbour, Clock::time_point at = Clock::now());
  // The last neighbour `port` heard, unless its TTL ran out before `now`.
  std::optional<LldpNeighbour> neighbour(const std::string& port, Clock::time_point now = Clock::now()) const;
  // LLDPDUs that did not parse (counted, never kept: a peer's bytes).
  void rejected() { ++rejected_; }
  std::uint64_t rejected_count() const { return rejected_; }

 private:
  struct Heard {
    LldpNeighbour neighbour;
    Clock::time_point at;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Heard> by_port_;  // one entry per port of this agent
  std::atomic<std::uint64_t> rejected_{0};
};

}  // namespace tusk::lldp
