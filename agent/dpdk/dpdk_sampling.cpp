// The DPDK engine's sample(): what the TX and RX threads stored in their atomics, as streams (one
// per flow sent, one per stream received, a flow split over RX queues added up) and the port's
// own counters. Any thread; it never waits for the datapath.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/dpdk/dpdk_engine.hpp"
#include "agent/dpdk/dpdk_engine_internal.hpp"
#include "agent/latency_gauges.hpp"
#include "common/clock.hpp"
#include "common/counter_names.hpp"

namespace tusk::dpdk {

namespace {

void set_flow(proto::StreamCounters& stream, std::uint32_t src, std::uint16_t src_port, std::uint32_t dst,
              std::uint16_t dst_port, std::uint8_t dscp) {
  proto::Flow& flow = *stream.mutable_flow();
  flow.set_dscp(dscp);
  flow.set_src_address(path::ipv4_to_string(src));
  flow.set_dst_address(path::ipv4_to_string(dst));
  flow.set_src_port(src_port);
  flow.set_dst_port(dst_port);
  flow.set_protocol("udp");
}

}  // namespace

std::vector<proto::StreamCounters> DpdkEngine::sample() {
  std::vector<proto::StreamCounters> out;
  add_tx_streams(out);
  add_rx_streams(out);
  // The port's own extended statistics (CRC errors, missed, FEC where the driver has them) as
  // deltas over the test; informational, so no threshold judges this stream.
  if (port_) out.push_back(port_stream());
  return out;
}

void DpdkEngine::add_tx_streams(std::vector<proto::StreamCounters>& out) const {
  namespace c = counters;
  // When each target's TX thread began: its slots count from then.
  std::vector<std::int64_t> began(targets_.size(), 0);
  for (const auto& worker : workers_) {
    for (const std::size_t t : worker->targets) began[t] = worker->tx_began_ns.load(std::memory_order_relaxed);
  }
  for (const auto& target : targets_) {
    proto::StreamCounters stream;
    const FlowTarget& flow = target->flow;
    // One flow per peer keeps the plain name; several are told apart by stream id, as at the receiver.
    stream.set_stream_id(targets_.size() > 1 && plan_.dpdk().flows_per_peer() > 1
                             ? fmt::format("tx:{}/{}", flow.peer, flow.stream_id)
                             : fmt::format("tx:{}", flow.peer));
    stream.set_peer(flow.peer);
    stream.set_sender_stream_id(flow.stream_id);
    if (ipv4()) {
      set_flow(stream, frame_spec_.ip.src_address, flow.src_port, flow.address, frame_spec_.ip.dst_port, flow.dscp);
    }
    if (tracer_) path::put_path(tracer_->hops(static_cast<std::size_t>(&target - targets_.data())), stream);
    stream.set_kind("tx");
    auto& map = *stream.mutable_counters();
    map[std::string(c::kTxFrames)] = target->frames.load(std::memory_order_relaxed);
    map[std::string(c::kTxBytes)] = target->bytes.load(std::memory_order_relaxed);
    map[std::string(c::kTxSkippedFrames)] = target->skipped.load(std::memory_order_relaxed);
    // A TX thread that woke late (descheduled while threads were made) sent from then: its
    // throughput is measured from then, as an RDMA flow's first post is.
    if (const std::int64_t first = began[static_cast<std::size_t>(&target - targets_.data())]; first > 0) {
      (*stream.mutable_gauges())[std::string(c::kTrafficStartDelayMs)] =
          static_cast<double>(std::max<std::int64_t>(first - start_ns_, 0)) / 1e6;
    }
    out.push_back(std::move(stream));
  }
}

void DpdkEngine::add_rx_streams(std::vector<proto::StreamCounters>& out) {
  namespace c = counters;
  // A flow's frames stay on one RX queue, so a stream is normally one worker's. A driver that moves
  // frames to another queue when one is full splits a flow: its parts are added up and a notice
  // says so, because each part's sequence tracker counts the other part's frames as lost.
  std::vector<std::vector<const RxStreamCounters*>> groups;
  std::unordered_map<std::uint64_t, std::size_t> group_of;
  for (const auto& worker : workers_) {
    const std::size_t streams = worker->rx_stream_count.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < streams; ++i) {
      const RxStreamCounters& part = worker->rx_streams[i];
      const auto [at, added] = group_of.emplace(
          detail::stream_key(part.source, ipv4() ? part.flow.src_address : 0, part.stream_id), groups.size());
      if (added) groups.emplace_back();
      groups[at->second].push_back(&part);
    }
  }
  for (const auto& parts : groups) {
    const RxStreamCounters& rx = *parts.front();
    const auto sum = [&parts](std::atomic<std::uint64_t> RxStreamCounters::*counter) {
      std::uint64_t total = 0;
      for (const RxStreamCounters* part : parts) total += (part->*counter).load(std::memory_order_relaxed);
      return total;
    };
    if (parts.size() > 1 &&
        split_reported_
            .insert(group_of.at(detail::stream_key(rx.source, ipv4() ? rx.flow.src_address : 0, rx.stream_id)))
            .second &&
        events_) {
      events_(proto::AgentEvent::NOTICE,
              fmt::format("{} stream {} arrives on {} RX queues (the driver moved frames off a full queue): its loss, "
                          "reorder and gap counts are not exact",
                          peer_name(rx), rx.stream_id, parts.size()),
              rx_stream_id(rx));
    }
    proto::StreamCounters stream;
    stream.set_peer(peer_name(rx));
    stream.set_stream_id(rx_stream_id(rx));
    stream.set_sender_stream_id(rx.stream_id);
    stream.set_kind("rx");
    if (ipv4()) {
      set_flow(stream, rx.flow.src_address, rx.flow.src_port, rx.flow.dst_address, rx.flow.dst_port,
               rx.sent_dscp.value_or(rx.flow.dscp));
    }
    auto& map = *stream.mutable_counters();
    map[std::string(c::kRxFrames)] = sum(&RxStreamCounters::frames);
    map[std::string(c::kRxBytes)] = sum(&RxStreamCounters::bytes);
    map[std::string(c::kBitsCompared)] = sum(&RxStreamCounters::bits_compared);
    map[std::string(c::kBitErrors)] = sum(&RxStreamCounters::bit_errors);
    map[std::string(c::kErroredFrames)] = sum(&RxStreamCounters::errored_frames);
    map[std::string(c::kLostFrames)] = sum(&RxStreamCounters::lost);
    map[std::string(c::kGapLostFrames)] = sum(&RxStreamCounters::gap_lost);
    map[std::string(c::kDuplicates)] = sum(&RxStreamCounters::duplicates);
    map[std::string(c::kReordered)] = sum(&RxStreamCounters::reordered);
    map[std::string(c::kErrorBursts)] = sum(&RxStreamCounters::error_bursts);
    // A gap that closed (down, then up) is counted as a flap, whatever the driver says of the link
    // (a switch port that stops forwarding keeps carrier); one still open at the end is a traffic
    // gap of its own. The port's own link changes are events and counts on its port stream.
    const std::uint64_t flaps = sum(&RxStreamCounters::traffic_gaps);
    map[std::string(c::kTrafficGaps)] = flaps + sum(&RxStreamCounters::open_gap);
    map[std::string(c::kLinkFlaps)] = flaps;
    std::uint64_t longest_gap_ms = 0;
    for (const RxStreamCounters* part : parts) {
      longest_gap_ms = std::max(longest_gap_ms, part->longest_gap_ms.load(std::memory_order_relaxed));
    }
    map[std::string(c::kLongestGapMs)] = longest_gap_ms;
    map[std::string(c::kHostDrops)] = host_drops_.load(std::memory_order_relaxed);
    map[std::string(c::kBadHeaders)] = sum(&RxStreamCounters::bad_headers);
    map[std::string(c::kUnattributedBadHeaders)] = bad_headers_.load(std::memory_order_relaxed);
    map[std::string(c::kNegativeLatencies)] = sum(&RxStreamCounters::negative_latencies);
    map[std::string(c::kVlanTaggedFrames)] = sum(&RxStreamCounters::vlan_tagged);
    map[std::string(c::kVlanMismatches)] = sum(&RxStreamCounters::vlan_mismatches);
    map[std::string(c::kPcpChanges)] = sum(&RxStreamCounters::pcp_changes);
    if (ipv4()) {
      map[std::string(c::kCeMarked)] = sum(&RxStreamCounters::ce_marked);
      map[std::string(c::kDscpRewrites)] = sum(&RxStreamCounters::dscp_rewrites);
    }
    std::vector<LatencySummary> latencies;
    for (const RxStreamCounters* part : parts) latencies.push_back(part->latency.read());
    put_latency_gauges(merge_summaries(latencies), stream);
    out.push_back(std::move(stream));
  }
}

proto::StreamCounters DpdkEngine::port_stream() const {
  namespace c = counters;
  proto::StreamCounters stream;
  stream.set_stream_id("port:" + port_->name());
  stream.set_kind("port");
  auto& map = *stream.mutable_counters();
  for (const auto& [name, value] : port_->xstats()) {
    const auto before = start_xstats_.find(name);
    const std::uint64_t base = before == start_xstats_.end() ? 0 : before->second;
    map[name] = value >= base ? value - base : value;  // a reset counter counts from zero
  }
  map[std::string(c::kMisaddressedFrames)] = misaddressed_frames_.load(std::memory_order_relaxed);
  map[std::string(c::kPortLinkDowns)] = link_watch_.downs();
  const std::int64_t until = std::min(realtime_ns(), stop_requested_ns_.load());
  map[std::string(c::kPortLinkDownMs)] = static_cast<std::uint64_t>(link_watch_.down_ns(until) / 1'000'000);
  return stream;
}

}  // namespace tusk::dpdk
