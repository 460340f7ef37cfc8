// A multi-producer, single-consumer ring of mbufs between threads: the RX threads hand the first
// TX thread the ARP and ping answers they made, because a port's TX queue has one user. Owns the rte_ring and any mbufs
// still in it when destroyed.
#pragma once

#include <memory>
#include <string>

struct rte_mbuf;
struct rte_ring;

namespace tusk::dpdk {

class MbufRing {
 public:
  // `size`: a power of two; the ring holds size - 1. Throws EngineError naming the ring.
  explicit MbufRing(unsigned size);
  ~MbufRing();
  MbufRing(const MbufRing&) = delete;
  MbufRing& operator=(const MbufRing&) = delete;

  // False when full: the caller still owns `mbuf`.
  bool push(rte_mbuf* mbuf) noexcept;
  // Up to `count` mbufs into `out`, oldest first; returns how many.
  unsigned pop(rte_mbuf** out, unsigned count) noexcept;

 private:
  rte_ring* ring_ = nullptr;
};

}  // namespace tusk::dpdk
