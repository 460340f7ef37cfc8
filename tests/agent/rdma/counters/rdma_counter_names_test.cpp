#include "agent/rdma/counters/rdma_counter_names.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <string_view>

namespace tusk::counters::rdma {
namespace {

std::string canonical(std::string_view driver_name) {
  const auto name = canonical_rdma_counter(driver_name);
  return name ? std::string(*name) : std::string("<unmapped>");
}

// ---- rxe (kernel 6.1 rxe_hw_counters.c) -----------------------------------------------------------

TEST(RdmaCounterNames, RxeNamesMapOntoCanonicalNames) {
  EXPECT_EQ(canonical("sent_pkts"), "port_xmit_packets");
  EXPECT_EQ(canonical("rcvd_pkts"), "port_rcv_packets");
  EXPECT_EQ(canonical("out_of_seq_request"), "out_of_sequence");
  EXPECT_EQ(canonical("rcvd_seq_err"), "packet_seq_err");
  EXPECT_EQ(canonical("completer_retry_err"), "local_ack_timeout_err");
  EXPECT_EQ(canonical("retry_exceeded_err"), "req_transport_retries_exceeded");
  EXPECT_EQ(canonical("rcvd_rnr_err"), "rnr_nak_retry_err");
  EXPECT_EQ(canonical("retry_rnr_exceeded_err"), "req_rnr_retries_exceeded");
  EXPECT_EQ(canonical("duplicate_request"), "duplicate_request");
  EXPECT_EQ(canonical("link_downed"), "link_downed");
  EXPECT_EQ(canonical("send_err"), "send_err");
}

TEST(RdmaCounterNames, EveryRxeCounterIsMappedOrDeliberatelyRaw) {
  const std::set<std::string_view> deliberately_raw = {"send_rnr_err", "ack_deferred", "rdma_sends", "rdma_recvs"};
  for (std::string_view name :
       {"sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request", "rcvd_rnr_err", "send_rnr_err",
        "rcvd_seq_err", "ack_deferred", "retry_exceeded_err", "retry_rnr_exceeded_err", "completer_retry_err",
        "send_err", "link_downed", "rdma_sends", "rdma_recvs"}) {
    EXPECT_NE(canonical_rdma_counter(name).has_value(), deliberately_raw.contains(name)) << name;
  }
}

// ---- mlx5 and the IB port counters ---------------------------------------------------------------

TEST(RdmaCounterNames, Mlx5AndIbPortNamesAreCanonicalAlready) {
  for (std::string_view name : {"out_of_sequence",
                                "packet_seq_err",
                                "implied_nak_seq_err",
                                "local_ack_timeout_err",
                                "duplicate_request",
                                "rnr_nak_retry_err",
                                "req_transport_retries_exceeded",
                                "req_rnr_retries_exceeded",
                                "np_cnp_sent",
                                "rp_cnp_handled",
                                "np_ecn_marked_roce_packets",
                                "rx_icrc_encapsulated",
                                "roce_adp_retrans",
                                "out_of_buffer",
                                "symbol_error",
                                "link_downed",
                                "link_error_recovery",
                                "port_rcv_errors",
                                "port_xmit_discards",
                                "port_xmit_wait",
                                "port_xmit_packets",
                                "port_rcv_packets"}) {
    EXPECT_EQ(canonical(name), name);
  }
}

// The counters a threshold judges one by one (max_out_of_sequence, max_ack_timeouts, max_cnp, ...):
// the names mlx5, rxe and the IB port counters give them, as their drivers document.
TEST(RdmaCounterNames, EveryCounterAThresholdJudgesOneByOneHasItsDriversNamesMappedOntoIt) {
  const std::map<std::string_view, std::set<std::string_view>> expected = {
      {counters::kOutOfSequence, {"out_of_sequence", "out_of_seq_request"}},
      {counters::kPacketSeqErr, {"packet_seq_err", "rcvd_seq_err"}},
      {counters::kLocalAckTimeoutErr, {"local_ack_timeout_err", "completer_retry_err"}},
      {counters::kNpCnpSent, {"np_cnp_sent"}},
      {counters::kNpEcnMarkedRocePackets, {"np_ecn_marked_roce_packets"}},
      {counters::kSymbolError, {"symbol_error"}},
  };
  for (const auto& [canonical_name, drivers] : expected) {
    std::set<std::string_view> found;
    for (const auto& entry : driver_counter_table()) {
      if (entry.canonical == canonical_name) found.insert(entry.driver_name);
    }
    EXPECT_EQ(found, drivers) << canonical_name;
  }
}

TEST(RdmaCounterNames, DataCountersBecomeBytesWithAScaleOfFour) {
  const auto* xmit = find_driver_counter("port_xmit_data");
  const auto* rcv = find_driver_counter("port_rcv_data");
  ASSERT_NE(xmit, nullptr);
  ASSERT_NE(rcv, nullptr);
  EXPECT_EQ(xmit->canonical, "port_xmit_bytes");
  EXPECT_EQ(rcv->canonical, "port_rcv_bytes");
  EXPECT_EQ(xmit->scale, 4u);
  EXPECT_EQ(rcv->scale, 4u);
  EXPECT_EQ(find_driver_counter("port_xmit_packets")->scale, 1u);
  EXPECT_EQ(find_driver_counter("sent_pkts")->scale, 1u);
}

TEST(RdmaCounterNames, UnmappedNamesGiveNothing) {
  for (std::string_view name : {"rdma_sends", "ack_deferred", "unicast_xmit_packets", "rx_write_requests",
                                "resp_cqe_flush_error", "lifespan", "", "PACKET_SEQ_ERR"}) {
    EXPECT_FALSE(canonical_rdma_counter(name).has_value()) << name;
    EXPECT_EQ(find_driver_counter(name), nullptr) << name;
  }
}

// ---- kinds -----------------------------------------------------------------------------------------

TEST(RdmaCounterNames, KindsOfTheIssuesCanonicalNames) {
  const std::map<std::string_view, CounterKind> expected = {
      {"out_of_sequence", CounterKind::kError},
      {"packet_seq_err", CounterKind::kError},
      {"implied_nak_seq_err", CounterKind::kError},
      {"local_ack_timeout_err", CounterKind::kError},
      {"duplicate_request", CounterKind::kError},
      {"rnr_nak_retry_err", CounterKind::kError},
      {"req_transport_retries_exceeded", CounterKind::kError},
      {"np_cnp_sent", CounterKind::kCongestion},
      {"rp_cnp_handled", CounterKind::kCongestion},
      {"np_ecn_marked_roce_packets", CounterKind::kCongestion},
      {"rx_icrc_encapsulated", CounterKind::kError},
      {"roce_adp_retrans", CounterKind::kError},
      {"symbol_error", CounterKind::kError},
      {"link_downed", CounterKind::kError},
      {"link_error_recovery", CounterKind::kError},
      {"port_rcv_errors", CounterKind::kError},
      {"port_xmit_discards", CounterKind::kError},
      {"port_xmit_wait", CounterKind::kCongestion},
      {"port_xmit_bytes", CounterKind::kTraffic},
      {"port_rcv_bytes", CounterKind::kTraffic},
      {"port_xmit_packets", CounterKind::kTraffic},
      {"port_rcv_packets", CounterKind::kTraffic},
  };
  for (const auto& [name, kind] : expected) {
    const auto got = rdma_counter_kind(name);
    ASSERT_TRUE(got.has_value()) << name;
    EXPECT_EQ(*got, kind) << name;
  }
  EXPECT_FALSE(rdma_counter_kind("rdma_sends").has_value());
  // Kinds are looked up by canonical name, not by driver name.
  EXPECT_FALSE(rdma_counter_kind("port_xmit_data").has_value());
}

// ---- the table's own consistency -------------------------------------------------------------------

TEST(RdmaCounterNames, EachDriverNameAppearsOnce) {
  std::set<std::string_view> seen;
  for (const auto& entry : driver_counter_table()) {
    EXPECT_TRUE(seen.insert(entry.driver_name).second) << entry.driver_name;
  }
  EXPECT_GE(seen.size(), 40u);
}

TEST(RdmaCounterNames, ACanonicalNameHasOneKindAndUnitsInItsName) {
  std::map<std::string_view, CounterKind> kinds;
  for (const auto& entry : driver_counter_table()) {
    const auto [it, inserted] = kinds.emplace(entry.canonical, entry.kind);
    EXPECT_EQ(it->second, entry.kind) << entry.canonical << " has two kinds";
    EXPECT_GE(entry.scale, 1u) << entry.driver_name;
    // A scaled counter changes unit, and the canonical name must say which.
    if (entry.scale != 1) {
      EXPECT_TRUE(entry.canonical.ends_with("_bytes")) << entry.canonical;
    }
    EXPECT_LE(entry.pma_width_bits, 64u) << entry.driver_name;
  }
}

TEST(RdmaCounterNames, PortCounterWidthsFollowTheIba) {
  EXPECT_EQ(find_driver_counter("symbol_error")->pma_width_bits, 16u);
  EXPECT_EQ(find_driver_counter("link_downed")->pma_width_bits, 8u);
  EXPECT_EQ(find_driver_counter("link_error_recovery")->pma_width_bits, 8u);
  EXPECT_EQ(find_driver_counter("port_xmit_wait")->pma_width_bits, 32u);
  EXPECT_EQ(find_driver_counter("local_link_integrity_errors")->pma_width_bits, 4u);
  // Width depends on extended-counter support: not fixed.
  EXPECT_EQ(find_driver_counter("port_xmit_data")->pma_width_bits, 0u);
  EXPECT_EQ(find_driver_counter("out_of_sequence")->pma_width_bits, 0u);
}

}  // namespace
}  // namespace tusk::counters::rdma
