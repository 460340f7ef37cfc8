#include "agent/dpdk/neighbour_resolver.hpp"

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <thread>

#include "agent/dpdk/path_probe.hpp"
#include "agent/engine.hpp"

namespace tusk::dpdk {
namespace {

constexpr auto kRetryInterval = std::chrono::milliseconds(200);

// An mbuf holding what `write` writes (at most `length` bytes; it returns how many); nullptr when
// it wrote nothing, or there was no mbuf or no room.
template <typename Write>
rte_mbuf* make_frame(Port& port, std::size_t length, Write&& write) {
  rte_mbuf* mbuf = rte_pktmbuf_alloc(port.mempool());
  if (mbuf == nullptr) return nullptr;
  auto* data = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(mbuf, static_cast<std::uint16_t>(length)));
  const std::size_t written = data ? write(data) : 0;
  if (written == 0) {
    rte_pktmbuf_free(mbuf);
    return nullptr;
  }
  rte_pktmbuf_trim(mbuf, static_cast<std::uint16_t>(length - written));
  return mbuf;
}

// Sends `mbuf` (taking it, sent or not).
bool send(Port& port, rte_mbuf* mbuf) {
  if (rte_eth_tx_burst(port.id(), 0, &mbuf, 1) == 1) return true;
  rte_pktmbuf_free(mbuf);
  return false;
}

}  // namespace

rte_mbuf* answer_for_us(Port& port, const Ipv4Interface& interface, const rte_mbuf* frame) {
  if (frame->nb_segs != 1) return nullptr;  // ARP and ping fit in one segment; anything else is not ours
  const auto* data = rte_pktmbuf_mtod(frame, const std::uint8_t*);
  const std::size_t length = rte_pktmbuf_data_len(frame);
  if (may_be_probe_for_us(interface, data, length)) {
    return make_frame(port, kProbeAnswerRoom,
                      [&](std::uint8_t* reply) { return answer_probe(interface, data, length, reply); });
  }
  if (!may_ask_for_us(interface, data, length)) return nullptr;
  return make_frame(port, std::max<std::size_t>(length, kMinFrameLength),
                    [&](std::uint8_t* reply) { return answer_for_us(interface, data, length, reply); });
}

std::size_t answer_frames_for_us(Port& port, const Ipv4Interface& interface, rte_mbuf* const* frames,
                                 std::uint16_t count) {
  std::size_t answered = 0;
  for (std::uint16_t i = 0; i < count; ++i) {
    if (rte_mbuf* reply = answer_for_us(port, interface, frames[i])) answered += send(port, reply) ? 1 : 0;
  }
  return answered;
}

MacAddress resolve_mac(Port& port, const Ipv4Interface& interface, std::uint32_t address,
                       std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto next_request = std::chrono::steady_clock::now();
  std::array<rte_mbuf*, kBurst> burst{};
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::chrono::steady_clock::now() >= next_request) {
      if (rte_mbuf* request = make_frame(port, kMinFrameLength, [&](std::uint8_t* frame) {
            return write_arp_request(interface, address, frame);
          })) {
        send(port, request);
      }
      next_request += kRetryInterval;
    }
    const std::uint16_t got = rte_eth_rx_burst(port.id(), 0, burst.data(), kBurst);
    std::optional<MacAddress> found;
    for (std::uint16_t i = 0; i < got; ++i) {
      const auto arp = parse_arp(rte_pktmbuf_mtod(burst[i], const std::uint8_t*), rte_pktmbuf_data_len(burst[i]));
      if (arp && arp->operation == 2 && arp->sender_address == address) found = arp->sender_mac;
    }
    answer_frames_for_us(port, interface, burst.data(), got);
    for (std::uint16_t i = 0; i < got; ++i) rte_pktmbuf_free(burst[i]);
    if (found) return *found;
    if (got == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  throw EngineError(
      fmt::format("DPDK port {} ({}): no ARP reply from {} within {} ms; check the port's address and "
                  "gateway and which switch port it is cabled to",
                  port.name(), to_string(interface), path::ipv4_to_string(address), timeout.count()));
}

}  // namespace tusk::dpdk
