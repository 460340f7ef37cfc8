#include "agent/rdma/counters/rdma_counter_names.hpp"

#include <array>

namespace tusk::counters::rdma {
namespace {

using enum CounterKind;

// Sources:
// - IB port counters: the IBA PortCounters / PortCountersExtended attributes as the kernel exposes
//   them under ports/<n>/counters/ (drivers/infiniband/core/sysfs.c, PORT_PMA_ATTR: name, width).
// - mlx5: drivers/infiniband/hw/mlx5/counters.c (q counters, congestion counters, extended error
//   counters, RoCE accelerator counters, rx_icrc_encapsulated) and NVIDIA's "Understanding mlx5
//   Linux Counters". The q counters are 32-bit in the hardware and wrap.
// - rxe: drivers/infiniband/sw/rxe/rxe_hw_counters.c (kernel 6.1); 64-bit software counters.
// One entry a line reads as a table.
// clang-format off
constexpr std::array kTable = {
    // ---- IB port counters (ports/<n>/counters/), shared by every driver with a PMA (mlx4, mlx5, ...).
    // The data counters count 4-byte words ("octets divided by 4" in the IBA).
    DriverCounter{"port_xmit_data", kPortXmitBytes, kTraffic, 4},
    DriverCounter{"port_rcv_data", kPortRcvBytes, kTraffic, 4},
    DriverCounter{"port_xmit_packets", kPortXmitPackets, kTraffic},
    DriverCounter{"port_rcv_packets", kPortRcvPackets, kTraffic},
    DriverCounter{"symbol_error", kSymbolError, kError, 1, 16},
    DriverCounter{"link_error_recovery", kLinkErrorRecovery, kError, 1, 8},
    DriverCounter{"link_downed", kLinkDowned, kError, 1, 8},
    DriverCounter{"port_rcv_errors", kPortRcvErrors, kError, 1, 16},
    DriverCounter{"port_rcv_remote_physical_errors", kPortRcvRemotePhysicalErrors, kError, 1, 16},
    DriverCounter{"port_rcv_switch_relay_errors", kPortRcvSwitchRelayErrors, kError, 1, 16},
    DriverCounter{"port_xmit_discards", kPortXmitDiscards, kError, 1, 16},
    DriverCounter{"port_xmit_constraint_errors", kPortXmitConstraintErrors, kError, 1, 8},
    DriverCounter{"port_rcv_constraint_errors", kPortRcvConstraintErrors, kError, 1, 8},
    DriverCounter{"local_link_integrity_errors", kLocalLinkIntegrityErrors, kError, 1, 4},
    DriverCounter{"excessive_buffer_overrun_errors", kExcessiveBufferOverrunErrors, kError, 1, 4},
    // Ticks in which the port had data to send but no credit (PFC pause on RoCE): back-pressure.
    DriverCounter{"port_xmit_wait", kPortXmitWait, kCongestion, 1, 32},

    // ---- mlx5 hw_counters/ (already canonical; listed for their kind).
    DriverCounter{"out_of_sequence", kOutOfSequence, kError},         // responder: request PSN ahead of expected
    DriverCounter{"packet_seq_err", kPacketSeqErr, kError},           // requester: PSN-sequence NAKs received
    DriverCounter{"implied_nak_seq_err", kImpliedNakSeqErr, kError},  // requester: read/atomic response skipped PSNs
    DriverCounter{"local_ack_timeout_err", kLocalAckTimeoutErr, kError},  // requester: ACK timer expired, retried
    DriverCounter{"duplicate_request", kDuplicateRequest, kError},        // responder: a retransmitted request arrived
    // RNR NAKs received and retried (the limit was not yet reached), not RNR retry exhaustion.
    DriverCounter{"rnr_nak_retry_err", kRnrNakRetryErr, kError},
    // The two "retry count ran out, the QP went to error" counters. Kernels before 6.11 do not expose
    // them; req_cqe_error is not a substitute (it counts every requester error completion).
    DriverCounter{"req_transport_retries_exceeded", kReqTransportRetriesExceeded, kError},
    DriverCounter{"req_rnr_retries_exceeded", kReqRnrRetriesExceeded, kError},
    DriverCounter{"roce_adp_retrans", kRoceAdpRetrans, kError},  // adaptive retransmissions
    DriverCounter{"roce_adp_retrans_to", kRoceAdpRetransTo, kError},
    DriverCounter{"rx_icrc_encapsulated", kRxIcrcEncapsulated, kError},  // RoCE packets with a bad ICRC
    DriverCounter{"out_of_buffer", kOutOfBuffer, kError},                // packets dropped: no receive WQE posted
    DriverCounter{"req_cqe_error", kReqCqeError, kError},
    DriverCounter{"resp_cqe_error", kRespCqeError, kError},
    DriverCounter{"resp_local_length_error", kRespLocalLengthError, kError},
    DriverCounter{"req_remote_invalid_request", kReqRemoteInvalidRequest, kError},
    DriverCounter{"req_remote_access_errors", kReqRemoteAccessErrors, kError},
    DriverCounter{"resp_remote_access_errors", kRespRemoteAccessErrors, kError},
    DriverCounter{"np_cnp_sent", kNpCnpSent, kCongestion},
    DriverCounter{"rp_cnp_handled", kRpCnpHandled, kCongestion},
    DriverCounter{"rp_cnp_ignored", kRpCnpIgnored, kCongestion},
    DriverCounter{"np_ecn_marked_roce_packets", kNpEcnMarkedRocePackets, kCongestion},

    // ---- rxe hw_counters/ (sent_pkts, rcvd_pkts count every RoCE packet rxe sent or accepted,
    // ACKs included, as the port packet counters do). duplicate_request and link_downed already have
    // canonical names (above); rxe's link_downed is a 64-bit counter, not the 8-bit PMA one.
    DriverCounter{"sent_pkts", kPortXmitPackets, kTraffic},
    DriverCounter{"rcvd_pkts", kPortRcvPackets, kTraffic},
    DriverCounter{"out_of_seq_request", kOutOfSequence, kError},
    DriverCounter{"rcvd_seq_err", kPacketSeqErr, kError},
    // rxe_comp.c bumps completer_retry_err each time the completer starts a go-back-N retry: when the
    // retransmit timer fires (an ACK timeout), but also on a PSN-sequence NAK (already counted in
    // rcvd_seq_err) or a read/atomic response that implies a NAK. rxe has no pure ACK-timeout counter;
    // this is the closest, so on rxe local_ack_timeout_err is an upper bound on ACK timeouts.
    DriverCounter{"completer_retry_err", kLocalAckTimeoutErr, kError},
    // rcvd_rnr_err counts RNR NAKs received (then retried): mlx5's rnr_nak_retry_err. The retry
    // limit running out is retry_rnr_exceeded_err, mlx5's req_rnr_retries_exceeded.
    DriverCounter{"rcvd_rnr_err", kRnrNakRetryErr, kError},
    DriverCounter{"retry_rnr_exceeded_err", kReqRnrRetriesExceeded, kError},
    DriverCounter{"retry_exceeded_err", kReqTransportRetriesExceeded, kError},
    // The UDP send under rxe failed (no route, device down, no memory): a host-side drop.
    DriverCounter{"send_err", kSendErr, kError},
    // Left raw on purpose: send_rnr_err (this side, as responder, sent an RNR NAK: a receive-queue
    // sizing matter, counted as rnr_nak_retry_err by the peer), ack_deferred, rdma_sends, rdma_recvs.
};
// clang-format on

}  // namespace

std::span<const DriverCounter> driver_counter_table() {
  return kTable;
}

const DriverCounter* find_driver_counter(std::string_view driver_name) {
  for (const auto& entry : kTable) {
    if (entry.driver_name == driver_name) return &entry;
  }
  return nullptr;
}

std::optional<std::string_view> canonical_rdma_counter(std::string_view driver_name) {
  if (const auto* entry = find_driver_counter(driver_name)) return entry->canonical;
  return std::nullopt;
}

std::optional<CounterKind> rdma_counter_kind(std::string_view canonical_name) {
  for (const auto& entry : kTable) {
    if (entry.canonical == canonical_name) return entry.kind;
  }
  return std::nullopt;
}

}  // namespace tusk::counters::rdma
