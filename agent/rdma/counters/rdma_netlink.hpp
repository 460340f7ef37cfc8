// The kernel's per-QP counters over RDMA netlink (what `rdma statistic qp` reads): binding a QP to a
// counter of its own, and reading every counter of a port with the QPs bound to each. The message
// builders and the reply parser are plain functions of bytes, so the tests read recorded replies
// (mlx5's layout, rxe's refusals) without a NIC; RdmaNetlink is the socket.
//
// Layout (drivers/infiniband/core/nldev.c): a STAT_GET dump for RES_QP answers one message per
// counter batch: DEV_INDEX, DEV_NAME, STAT_COUNTER { STAT_COUNTER_ENTRY { PORT_INDEX,
// STAT_COUNTER_ID, RES_QP { RES_QP_ENTRY { RES_LQPN } ... }, STAT_HWCOUNTERS { STAT_HWCOUNTER_ENTRY
// { ENTRY_NAME, ENTRY_VALUE } ... } } ... }. Every count and name from the kernel is bounded here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

struct mnl_socket;
struct nlmsghdr;

namespace tusk::rdma::nl {

// Bounds on a reply: no NIC has more counters than this, and a counter bound by Tusk holds one QP
// (an auto-mode counter may hold a process's every QP of a type; past this it reads as shared).
inline constexpr std::size_t kMaxHwCounters = 512;
inline constexpr std::size_t kMaxQpsPerCounter = 4096;
inline constexpr std::size_t kMaxCounterNameBytes = 64;

// One counter of a port: its id, the QPs bound to it, and its values by the driver's names.
struct QpCounter {
  std::uint32_t port = 0;
  std::uint32_t counter_id = 0;
  std::vector<std::uint32_t> qpns;
  std::vector<std::pair<std::string, std::uint64_t>> values;
};

// Message builders: each writes one request into `buffer` (at least kRequestBytes) and returns it.
inline constexpr std::size_t kRequestBytes = 256;
nlmsghdr* put_device_dump(std::span<std::byte> buffer, std::uint32_t seq);
nlmsghdr* put_qp_bind(std::span<std::byte> buffer, std::uint32_t seq, std::uint32_t device_index, std::uint32_t port,
                      std::uint32_t qpn);
nlmsghdr* put_qp_unbind(std::span<std::byte> buffer, std::uint32_t seq, std::uint32_t device_index, std::uint32_t port,
                        std::uint32_t counter_id, std::uint32_t qpn);
nlmsghdr* put_qp_counters_dump(std::span<std::byte> buffer, std::uint32_t seq, std::uint32_t device_index,
                               std::uint32_t port);

// A device dump's message: its index when it names `device`.
std::optional<std::uint32_t> device_index_in(const nlmsghdr& message, const std::string& device);
// The counters in one message of a QP counter dump; appended to `into`. False when the message is
// malformed (an attribute of the wrong type or size, a name too long, past a bound): nothing of it
// is kept.
bool parse_qp_counters(const nlmsghdr& message, std::vector<QpCounter>& into);

// A NETLINK_RDMA socket. Throws EngineError when it cannot be opened.
class RdmaNetlink {
 public:
  RdmaNetlink();
  ~RdmaNetlink();
  RdmaNetlink(const RdmaNetlink&) = delete;
  RdmaNetlink& operator=(const RdmaNetlink&) = delete;

  // Sends `request` and hands each reply message to `on_message` until the kernel's ack or the
  // dump's end. Returns 0, or the errno the kernel (or the socket) answered.
  int transact(nlmsghdr* request, const std::function<void(const nlmsghdr&)>& on_message);
  std::uint32_t next_seq() { return ++seq_; }

 private:
  mnl_socket* socket_ = nullptr;
  std::uint32_t port_id_ = 0;
  std::uint32_t seq_ = 0;
};

}  // namespace tusk::rdma::nl
