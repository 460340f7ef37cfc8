#include "agent/dpdk/mbuf_ring.hpp"

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <fmt/format.h>

#include <atomic>

#include "agent/engine.hpp"

namespace tusk::dpdk {

MbufRing::MbufRing(unsigned size) {
  // Ring names are global to the EAL: each ring gets its own.
  static std::atomic<unsigned> next{0};
  const std::string name = fmt::format("tusk_mbufs_{}", next++);
  ring_ = rte_ring_create(name.c_str(), size, SOCKET_ID_ANY, RING_F_SC_DEQ);
  if (ring_ == nullptr) {
    throw EngineError(fmt::format("rte_ring_create({}, {} entries): {}", name, size, rte_strerror(rte_errno)));
  }
}

MbufRing::~MbufRing() {
  rte_mbuf* left[32];
  while (const unsigned got = pop(left, 32)) rte_pktmbuf_free_bulk(left, got);
  rte_ring_free(ring_);
}

bool MbufRing::push(rte_mbuf* mbuf) noexcept {
  return rte_ring_sp_enqueue(ring_, mbuf) == 0;
}

unsigned MbufRing::pop(rte_mbuf** out, unsigned count) noexcept {
  return rte_ring_sc_dequeue_burst(ring_, reinterpret_cast<void**>(out), count, nullptr);
}

}  // namespace tusk::dpdk
