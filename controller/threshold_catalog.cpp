#include "controller/threshold_catalog.hpp"

#include <algorithm>

namespace tusk {

const std::vector<ThresholdKind>& threshold_catalog() {
  using V = ThresholdKind::Value;
  // One entry per line reads as a table; clang-format would put every field on its own line.
  // clang-format off
  static const std::vector<ThresholdKind> catalog{
      {"max_ber", "ber", Bound::Max, V::Ratio, {"dpdk"},
       "highest bit error ratio: errored bits / bits received"},
      {"max_loss", "loss_ratio", Bound::Max, V::Ratio, {"dpdk"},
       "highest frame loss ratio: frames lost / frames sent"},
      {"max_errored_frames", "errored_frames", Bound::Max, V::Count, {"dpdk"},
       "most frames received with at least one bit error"},
      {"max_lost_frames", "lost_frames", Bound::Max, V::Count, {"dpdk"},
       "most frames sent but never received"},
      {"max_flaps", "link_flaps", Bound::Max, V::Count, {"dpdk", "rdma"},
       "most link down events during the test"},
      {"max_latency_p99", "latency_p99_ns", Bound::Max, V::Duration, {"dpdk", "rdma"},
       "highest 99th percentile latency"},
      {"max_completion_errors", "completion_errors", Bound::Max, V::Count, {"rdma"},
       "most work completions with an error status"},
      {"max_integrity_errors", "integrity_errors", Bound::Max, V::Count, {"rdma"},
       "most messages whose payload failed the data check"},
      {"max_retransmits", "retransmits", Bound::Max, V::Count, {"rdma"},
       "most transport retransmissions (NIC counters)"},
      {"min_throughput", "throughput_bps", Bound::Min, V::BitRate, {"dpdk", "rdma"},
       "lowest throughput, in bits per second"},
      {"max_host_drops", "host_drops", Bound::Max, V::Count, {"dpdk", "rdma"},
       "most packets the host dropped (NIC out-of-buffer, rx_missed)"},
  };
  // clang-format on
  return catalog;
}

const ThresholdKind* find_threshold(std::string_view key) {
  const auto& catalog = threshold_catalog();
  const auto found = std::find_if(catalog.begin(), catalog.end(),
                                  [key](const ThresholdKind& kind) { return kind.key == key; });
  return found == catalog.end() ? nullptr : &*found;
}

}  // namespace tusk
