// Canonical names of the counters engines report per stream. Engines map their driver's names to
// these; the verdict and the reports only ever read these.
#pragma once

#include <string_view>

namespace tusk::counters {

inline constexpr std::string_view kTxBytes = "tx_bytes";
inline constexpr std::string_view kRxBytes = "rx_bytes";
inline constexpr std::string_view kTxFrames = "tx_frames";
inline constexpr std::string_view kRxFrames = "rx_frames";
inline constexpr std::string_view kBitErrors = "bit_errors";
inline constexpr std::string_view kBitsCompared = "bits_compared";
inline constexpr std::string_view kErroredFrames = "errored_frames";
// Frames sent but never received, outside traffic gaps (the controller adds those lost at the end of
// the test, which only the sender's count shows: kTailLostFrames of them).
inline constexpr std::string_view kLostFrames = "lost_frames";
// Frames lost inside traffic gaps: the flap's loss, judged with the flap (max_flaps).
inline constexpr std::string_view kGapLostFrames = "gap_lost_frames";
inline constexpr std::string_view kTailLostFrames = "tail_lost_frames";
inline constexpr std::string_view kLinkFlaps = "link_flaps";
inline constexpr std::string_view kCompletionErrors = "completion_errors";
inline constexpr std::string_view kIntegrityErrors = "integrity_errors";
// Bytes of the RDMA messages whose payload CRC the receiver checked (all of them, or the sample
// check_every asks for); its share of rx_bytes is the stream's payload_checked_share gauge.
inline constexpr std::string_view kPayloadBytesChecked = "payload_bytes_checked";
inline constexpr std::string_view kPayloadCheckedShare = "payload_checked_share";
inline constexpr std::string_view kRetransmits = "retransmits";
// An RDMA flow's own QP's retransmissions (its sequence-error NAKs, ACK timeouts and adaptive
// retransmissions, from the NIC's counter bound to that QP alone), and the packets it sent (its
// messages times the packets each takes at the path MTU): the flow's loss rate in localisation.
// Absent where the NIC keeps no counters per QP (the NIC port's stream says why).
inline constexpr std::string_view kQpRetransmits = "qp_retransmits";
inline constexpr std::string_view kQpTxPackets = "qp_tx_packets";
inline constexpr std::string_view kHostDrops = "host_drops";
// RDMA messages a QP posted and saw complete (a flow), or took in (a sink or a READ initiator).
inline constexpr std::string_view kTxMessages = "tx_messages";
inline constexpr std::string_view kRxMessages = "rx_messages";
// Frame slots a paced DPDK sender let pass once it fell more than a millisecond behind (its thread
// descheduled, or the port refused frames while its link was down): sending them late at once
// would overrun the receiver. What it owed and did not send: the tester's shortfall, not the link's.
inline constexpr std::string_view kTxSkippedFrames = "tx_skipped_frames";
inline constexpr std::string_view kStalls = "stalls";  // an RDMA flow waited stall_timeout with nothing completing
// An RDMA QP that never connected: refused by the peer or by the profile's route checks, no route,
// or given up after its retries. 1 on its stream, which otherwise only shows zeros.
inline constexpr std::string_view kConnectFailures = "connect_failures";
// An RDMA flow's time without traffic after its QP broke (port down, completion error, peer gone),
// until a new QP carried it again or the test ended; and how many new QPs took it over
// (recovery: reconnect).
inline constexpr std::string_view kDowntimeMs = "downtime_ms";
inline constexpr std::string_view kReconnects = "reconnects";
// Of downtime_ms, the part after the break could be repaired (its port up again, or the peer's
// disconnect received) until a new QP carried the flow: the reconnect's own time.
inline constexpr std::string_view kReconnectMs = "reconnect_ms";
inline constexpr std::string_view kDuplicates = "duplicates";
inline constexpr std::string_view kReordered = "reordered";
inline constexpr std::string_view kErrorBursts = "error_bursts";
inline constexpr std::string_view kTrafficGaps = "traffic_gaps";  // nothing received for a while
// The longest traffic gap that closed again (DPDK rx): from the last frame before it to the first
// after, the time a failed path took to be routed around.
inline constexpr std::string_view kLongestGapMs = "longest_gap_ms";
// Test frames of the stream whose Tusk header was hit on the way: counted as received and errored
// (errored_frames includes them), never as lost.
inline constexpr std::string_view kBadHeaders = "bad_headers";
// Test frames whose header was hit so that no stream can be told (the port's, on every rx stream).
inline constexpr std::string_view kUnattributedBadHeaders = "bad_headers_unattributed";
// Test frames that reached a port but were sent to another host's address (a switch flooding
// unknown unicast, a mirror): not counted in any stream; reported on the port's stream.
inline constexpr std::string_view kMisaddressedFrames = "misaddressed_frames";
// A port's link state as its driver reports it, on the port's stream: times it went down, and
// the time it spent down, over the test.
inline constexpr std::string_view kPortLinkDowns = "link_downs";
inline constexpr std::string_view kPortLinkDownMs = "link_down_ms";
// Training-step replay, per sending RDMA flow: steps finished, and the time per step (gauges).
inline constexpr std::string_view kStepsDone = "steps_done";
inline constexpr std::string_view kStepTimeMeanNs = "step_time_mean_ns";
inline constexpr std::string_view kStepTimeMaxNs = "step_time_max_ns";
// A test's, not a stream's: agents that gave no result.
inline constexpr std::string_view kAgentsLost = "agents_lost";
// Gauges (not cumulative).
inline constexpr std::string_view kLatencyP99Ns = "latency_p99_ns";
// How long after it was due (the start time; a training replay's first communication phase) a
// stream first carried data: an RDMA flow's first post, a sink's first message. Its throughput is
// measured from then, so a late first post neither hides in nor drags down the rate.
inline constexpr std::string_view kTrafficStartDelayMs = "traffic_start_delay_ms";
// One-way latency per received stream (common/latency_histogram.hpp), since the test started.
inline constexpr std::string_view kLatencyMinNs = "latency_min_ns";
inline constexpr std::string_view kLatencyP50Ns = "latency_p50_ns";
inline constexpr std::string_view kLatencyP999Ns = "latency_p999_ns";
inline constexpr std::string_view kLatencyMaxNs = "latency_max_ns";
inline constexpr std::string_view kLatencyMeanNs = "latency_mean_ns";
// Counters of the DPDK engine's VLAN and latency checks.
inline constexpr std::string_view kNegativeLatencies = "negative_latencies";  // RX before TX stamp: clocks apart
inline constexpr std::string_view kVlanTaggedFrames = "vlan_tagged_frames";   // arrived with an 802.1Q tag
inline constexpr std::string_view kVlanMismatches = "vlan_mismatches";        // tag (or none) not the test's
inline constexpr std::string_view kPcpChanges = "pcp_changes";                // PCP not the one sent
// ipv4_udp frames: what the switches on the way did to the IPv4 TOS byte.
inline constexpr std::string_view kCeMarked = "ce_marked";          // arrived with ECN = CE (congestion)
inline constexpr std::string_view kDscpRewrites = "dscp_rewrites";  // arrived with another DSCP than sent

// NIC port counters ("nic" streams) the verdict judges one by one. agent/rdma/counters/rdma_counter_names
// maps each driver's names onto these (rxe's out_of_seq_request is out_of_sequence, ...).
inline constexpr std::string_view kOutOfSequence = "out_of_sequence";             // responder: PSN ahead
inline constexpr std::string_view kPacketSeqErr = "packet_seq_err";               // requester: sequence NAKs
inline constexpr std::string_view kLocalAckTimeoutErr = "local_ack_timeout_err";  // requester: ACK timer fired
inline constexpr std::string_view kNpCnpSent = "np_cnp_sent";                     // CNPs sent for ECN marks
inline constexpr std::string_view kNpEcnMarkedRocePackets = "np_ecn_marked_roce_packets";
inline constexpr std::string_view kSymbolError = "symbol_error";  // physical layer
// Ethernet side of a NIC port (ethtool statistics): agent/rdma/counters/ethtool_counter_names maps drivers' names.
inline constexpr std::string_view kPauseFrames = "pause_frames";  // PAUSE/PFC frames received + sent
inline constexpr std::string_view kRxDiscards = "rx_discards";    // received, dropped: no port buffer
// Bits FEC corrected, and every bit the port received: their ratio over the test is the pre-FEC BER.
inline constexpr std::string_view kRxFecCorrectedBits = "rx_fec_corrected_bits";
inline constexpr std::string_view kRxPhyBits = "rx_phy_bits";

}  // namespace tusk::counters
