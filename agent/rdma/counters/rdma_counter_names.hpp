// The one table that turns RDMA drivers' counter names (the file names under sysfs
// class/infiniband/<dev>/ports/<n>/counters/ and .../hw_counters/) into Tusk's canonical NIC counter
// names, so the verdict and the reports judge "packet_seq_err" whether the NIC is mlx5 or rxe.
//
// Canonical spelling: where mlx5 (the NIC most labs run) and the IB port counters already have a
// name, that name is canonical; rxe's names map onto them. Two exceptions follow the rule that
// units go in names: the IB port data counters count 4-byte words, so counters/port_xmit_data and
// counters/port_rcv_data become port_xmit_bytes and port_rcv_bytes with a scale of 4. Traffic
// counters keep the IB spelling (port_xmit_packets, port_rcv_packets); rxe's sent_pkts/rcvd_pkts map
// onto those.
//
// A name not in the table is kept under its raw driver name by the caller and has no kind: it is
// reported, never judged.
//
// Everything here is constant data; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "common/counter_names.hpp"

namespace tusk::counters::rdma {

// ---- canonical names ----------------------------------------------------------------------------
// Traffic (cumulative since the driver loaded or the counters were last reset).
inline constexpr std::string_view kPortXmitBytes = "port_xmit_bytes";
inline constexpr std::string_view kPortRcvBytes = "port_rcv_bytes";
inline constexpr std::string_view kPortXmitPackets = "port_xmit_packets";
inline constexpr std::string_view kPortRcvPackets = "port_rcv_packets";
// Transport (RC) errors and retries.
using counters::kOutOfSequence;  // judged one by one: common/counter_names.hpp
using counters::kPacketSeqErr;   // judged one by one: common/counter_names.hpp
inline constexpr std::string_view kImpliedNakSeqErr = "implied_nak_seq_err";
using counters::kLocalAckTimeoutErr;  // judged one by one: common/counter_names.hpp
inline constexpr std::string_view kDuplicateRequest = "duplicate_request";
inline constexpr std::string_view kRnrNakRetryErr = "rnr_nak_retry_err";
inline constexpr std::string_view kReqRnrRetriesExceeded = "req_rnr_retries_exceeded";
inline constexpr std::string_view kReqTransportRetriesExceeded = "req_transport_retries_exceeded";
inline constexpr std::string_view kRoceAdpRetrans = "roce_adp_retrans";
inline constexpr std::string_view kRoceAdpRetransTo = "roce_adp_retrans_to";
inline constexpr std::string_view kRxIcrcEncapsulated = "rx_icrc_encapsulated";
inline constexpr std::string_view kOutOfBuffer = "out_of_buffer";
inline constexpr std::string_view kReqCqeError = "req_cqe_error";
inline constexpr std::string_view kRespCqeError = "resp_cqe_error";
inline constexpr std::string_view kRespLocalLengthError = "resp_local_length_error";
inline constexpr std::string_view kReqRemoteInvalidRequest = "req_remote_invalid_request";
inline constexpr std::string_view kReqRemoteAccessErrors = "req_remote_access_errors";
inline constexpr std::string_view kRespRemoteAccessErrors = "resp_remote_access_errors";
inline constexpr std::string_view kSendErr = "send_err";
// Link and physical layer (IB PortCounters).
using counters::kSymbolError;  // judged one by one: common/counter_names.hpp
inline constexpr std::string_view kLinkDowned = "link_downed";
inline constexpr std::string_view kLinkErrorRecovery = "link_error_recovery";
inline constexpr std::string_view kPortRcvErrors = "port_rcv_errors";
inline constexpr std::string_view kPortRcvRemotePhysicalErrors = "port_rcv_remote_physical_errors";
inline constexpr std::string_view kPortRcvSwitchRelayErrors = "port_rcv_switch_relay_errors";
inline constexpr std::string_view kPortXmitDiscards = "port_xmit_discards";
inline constexpr std::string_view kPortXmitConstraintErrors = "port_xmit_constraint_errors";
inline constexpr std::string_view kPortRcvConstraintErrors = "port_rcv_constraint_errors";
inline constexpr std::string_view kLocalLinkIntegrityErrors = "local_link_integrity_errors";
inline constexpr std::string_view kExcessiveBufferOverrunErrors = "excessive_buffer_overrun_errors";
// Congestion signals (ECN / DCQCN, PFC back-pressure).
using counters::kNpCnpSent;  // judged one by one: common/counter_names.hpp
inline constexpr std::string_view kRpCnpHandled = "rp_cnp_handled";
inline constexpr std::string_view kRpCnpIgnored = "rp_cnp_ignored";
using counters::kNpEcnMarkedRocePackets;  // judged one by one: common/counter_names.hpp
inline constexpr std::string_view kPortXmitWait = "port_xmit_wait";

// ---- the table ----------------------------------------------------------------------------------

enum class CounterKind {
  kTraffic,     // volume: what was carried
  kError,       // something went wrong (loss, retry, drop, bad packet, link event): the verdict may judge it
  kCongestion,  // the fabric pushed back (ECN marks, CNPs, PFC wait): not an error in itself, may be judged
};

struct DriverCounter {
  std::string_view driver_name;  // the sysfs file name
  std::string_view canonical;
  CounterKind kind;
  std::uint64_t scale = 1;  // canonical value = raw value * scale (4 for the IB data counters: words → bytes)
  // Width of the IB PortCounters field when the file sits under counters/: such counters saturate
  // (stop at 2^width - 1) instead of wrapping, per the IBA. 0 where the width is not fixed (the data
  // and packet counters are 32 or 64 bits depending on the port's extended-counter support) and for
  // names that only live under hw_counters/. Only counters/ readers may use it: rxe's
  // hw_counters/link_downed, say, is a 64-bit counter under the same name.
  unsigned pma_width_bits = 0;
};

// Every entry, grouped by source (IB port counters, mlx5, rxe). A driver name appears once.
std::span<const DriverCounter> driver_counter_table();

// The entry for a sysfs counter file name, or nullptr when the name is not mapped. Linear search:
// meant for set-up, not for a per-sample loop.
const DriverCounter* find_driver_counter(std::string_view driver_name);

// The canonical name of a sysfs counter file name; nullopt when unmapped (the caller keeps the raw name).
std::optional<std::string_view> canonical_rdma_counter(std::string_view driver_name);

// The kind of a canonical name; nullopt for names not in the table (raw names), which are reported only.
std::optional<CounterKind> rdma_counter_kind(std::string_view canonical_name);

}  // namespace tusk::counters::rdma
