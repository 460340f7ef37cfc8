#include "controller/profile/threshold_catalog.hpp"

#include <algorithm>

#include "common/counter_names.hpp"
#include "controller/profile/profile_schema.hpp"

namespace tusk {

const std::vector<ThresholdKind>& threshold_catalog() {
  using V = ThresholdKind::Value;
  using S = ThresholdKind::Scope;
  namespace c = counters;
  constexpr bool kSafe = true;
  // One entry per line reads as a table; clang-format would put every field on its own line.
  // clang-format off
  static const std::vector<ThresholdKind> catalog{
      {"max_ber", "ber", Bound::Max, V::Ratio,
       "highest bit error ratio: errored bits / bits received"},
      {"max_bit_errors", c::kBitErrors, Bound::Max, V::Count,
       "most payload bits received in error", kSafe, {"max_ber", "max_errored_frames"}},
      {"max_loss", "loss_ratio", Bound::Max, V::Ratio,
       "highest frame loss ratio: frames lost outside link flaps / frames sent"},
      {"max_errored_frames", c::kErroredFrames, Bound::Max, V::Count,
       "most frames received with at least one bit error"},
      {"max_lost_frames", c::kLostFrames, Bound::Max, V::Count,
       "most frames sent but never received, outside link flaps", kSafe, {"max_loss"}},
      {"max_flaps", c::kLinkFlaps, Bound::Max, V::Count,
       "most link down events during the test", kSafe},
      {"max_traffic_gaps", c::kTrafficGaps, Bound::Max, V::Count,
       "most gaps in a stream's traffic that no link flap accounts for", kSafe},
      {"max_latency_p99", c::kLatencyP99Ns, Bound::Max, V::Duration,
       "highest 99th percentile latency"},
      {"max_completion_errors", c::kCompletionErrors, Bound::Max, V::Count,
       "most work completions with an error status", kSafe},
      {"max_integrity_errors", c::kIntegrityErrors, Bound::Max, V::Count,
       "most messages whose payload failed the data check", kSafe},
      {"max_stalls", c::kStalls, Bound::Max, V::Count,
       "most times a flow had work in flight and nothing completed for its stall_timeout", kSafe},
      {"max_connect_failures", c::kConnectFailures, Bound::Max, V::Count,
       "most RDMA QPs that never connected (refused, no route, or given up after their retries)", kSafe},
      {"max_retransmits", c::kRetransmits, Bound::Max, V::Count,
       "most transport retransmissions (NIC counters)"},
      {"min_throughput", "throughput_bps", Bound::Min, V::BitRate,
       "lowest throughput, in bits per second"},
      {"max_host_drops", c::kHostDrops, Bound::Max, V::Count,
       "most packets the host dropped (NIC out-of-buffer, rx_missed)"},
      {"max_out_of_sequence", c::kOutOfSequence, Bound::Max, V::Count,
       "most requests a NIC port received ahead of the expected PSN (a packet lost on its way in)"},
      {"max_packet_seq_errors", c::kPacketSeqErr, Bound::Max, V::Count,
       "most PSN-sequence NAKs a NIC port received as requester (its packets lost on the way out)"},
      {"max_ack_timeouts", c::kLocalAckTimeoutErr, Bound::Max, V::Count,
       "most times a NIC port's requester waited out its ACK timer and sent again"},
      {"max_cnp", c::kNpCnpSent, Bound::Max, V::Count,
       "most congestion notification packets a NIC port sent for the ECN-marked packets it received"},
      {"max_ecn_marked_packets", c::kNpEcnMarkedRocePackets, Bound::Max, V::Count,
       "most RoCE packets a NIC port received marked CE by the fabric"},
      {"max_symbol_errors", c::kSymbolError, Bound::Max, V::Count,
       "most physical-layer symbol errors a NIC port counted"},
      {"max_pause_frames", c::kPauseFrames, Bound::Max, V::Count,
       "most PAUSE and PFC frames a NIC port received and sent (its ethtool counters)"},
      {"max_rx_discards", c::kRxDiscards, Bound::Max, V::Count,
       "most received packets a NIC port dropped for want of buffer space (its ethtool counters)"},
      {"max_pre_fec_ber", "pre_fec_ber", Bound::Max, V::Ratio,
       "highest pre-FEC bit error ratio of a NIC port: bits FEC corrected / bits received (ethtool counters)"},
      {"max_ce_marked", c::kCeMarked, Bound::Max, V::Count,
       "most frames of a flow that arrived marked Congestion Experienced (ECN)"},
      {"min_ce_marked", c::kCeMarked, Bound::Min, V::Count,
       "fewest frames of a flow that arrived CE-marked: a switch that must mark under congestion"},
      {"max_dscp_rewrites", c::kDscpRewrites, Bound::Max, V::Count,
       "most frames of a flow that arrived with another DSCP than their class"},
      {"max_agents_lost", c::kAgentsLost, Bound::Max, V::Count,
       "most agents of the test that may be lost (no result) while the rest are still judged", kSafe, {},
       S::Test},
  };
  // clang-format on
  return catalog;
}

const ThresholdKind* find_threshold(std::string_view key) {
  const auto& catalog = threshold_catalog();
  const auto found =
      std::find_if(catalog.begin(), catalog.end(), [key](const ThresholdKind& kind) { return kind.key == key; });
  return found == catalog.end() ? nullptr : &*found;
}

std::vector<Threshold> safe_default_thresholds(std::string_view engine, const std::vector<Threshold>& thresholds,
                                               const SourcePos& pos) {
  const auto set_by_profile = [&](std::string_view key) {
    return std::any_of(thresholds.begin(), thresholds.end(), [key](const Threshold& t) { return t.key == key; });
  };
  std::vector<Threshold> defaults;
  for (const auto& kind : threshold_catalog()) {
    if (!kind.safe_default) continue;
    if (!profile_schema::engine_measures(engine, kind.key)) continue;
    if (set_by_profile(kind.key) || std::any_of(kind.relaxed_by.begin(), kind.relaxed_by.end(), set_by_profile)) {
      continue;
    }
    Threshold threshold{std::string(kind.key), std::string(kind.metric), kind.bound, 0, pos};
    threshold.implicit = true;
    defaults.push_back(std::move(threshold));
  }
  return defaults;
}

}  // namespace tusk
