// A port's QPs' own transport counters, where the driver keeps them per QP (mlx5 binds a QP to a
// counter of its own over RDMA netlink, as `rdma statistic qp bind` does; needs CAP_NET_ADMIN), and
// a plain word on why not where it does not (rxe on Linux 6.1 answers ENOMEM: it has no per-counter
// statistics), so the stream says "per port only" instead of reading as clean.
//
// Used by the sampling thread alone. Values are canonical names (rdma_counter_names.hpp) → counts
// since the QP was bound; a QP whose counter the kernel freed (the QP destroyed) keeps its last.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "agent/rdma/counters/port_counters.hpp"

namespace tusk::rdma {

namespace nl {
class RdmaNetlink;
}

class QpCounterReader {
 public:
  // Finds the device over RDMA netlink; never throws: a device netlink cannot reach leaves the
  // reader per port only, with the reason.
  QpCounterReader(std::string device, std::uint32_t port);
  ~QpCounterReader();
  QpCounterReader(const QpCounterReader&) = delete;
  QpCounterReader& operator=(const QpCounterReader&) = delete;

  // Binds `qpn` to a counter of its own (once per QP). False, with why_not() set, when the driver
  // or the process cannot; then no QP of the port is tried again.
  bool bind(std::uint32_t qpn);
  // Reads the port's counters: each bound QP's values, kept until its next read.
  void read();
  // A QP's counters as last read; nullopt when it has none of its own.
  std::optional<CounterValues> values(std::uint32_t qpn) const;
  // Why QPs of this port are counted per port only; empty while binding works.
  const std::string& why_not() const { return why_not_; }
  // why_not(), the first time it is asked for after it is set; nullopt otherwise.
  std::optional<std::string> take_refusal();

 private:
  std::string device_;
  std::uint32_t port_;
  std::optional<std::uint32_t> device_index_;
  std::unique_ptr<nl::RdmaNetlink> netlink_;
  std::set<std::uint32_t> bound_;
  std::map<std::uint32_t, CounterValues> values_;
  std::string why_not_;
  bool refusal_taken_ = false;
};

// "The transport had to send again", from one QP's or one port's counters: sequence-error NAKs,
// ACK timeouts and adaptive retransmissions, under their canonical names.
std::uint64_t transport_retransmits(const CounterValues& values);

// What a bind's errno means for the operator.
std::string qp_counter_refusal(const std::string& device, int error);

// Why a device's QPs are not bound at all, from its vendor id (ibv_query_device): the software
// devices (Soft-RoCE, siw) keep no counters per QP, and binding rxe's QPs was followed by QP
// destroys stalled inside rxe in the VM lab; nullopt for a hardware NIC, whose driver answers the
// bind itself.
std::optional<std::string> software_device_refusal(const std::string& device, std::uint32_t vendor_id);

}  // namespace tusk::rdma
