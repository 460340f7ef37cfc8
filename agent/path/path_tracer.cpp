#include "agent/path/path_tracer.hpp"

#include <algorithm>

#include "agent/path/ipv4_address.hpp"

namespace tusk::path {

PathTracer::PathTracer(std::vector<TracedFlow> flows, double probes_per_second, std::uint8_t max_ttl)
    : flows_(std::move(flows)),
      state_(std::make_unique<FlowState[]>(flows_.size())),
      ns_per_probe_(probes_per_second > 0 ? 1e9 / probes_per_second : 0),
      max_ttl_(std::clamp<std::uint8_t>(max_ttl, 1, kMaxProbeTtl)) {
  index_.reserve(flows_.size());
  for (std::size_t i = 0; i < flows_.size(); ++i) index_.emplace(key(flows_[i].dst_address, flows_[i].src_port), i);
}

std::optional<PathTracer::Probe> PathTracer::next_probe(std::int64_t now_ns) {
  if (!enabled()) return std::nullopt;
  if (begin_ns_ == 0) begin_ns_ = now_ns;
  const auto due = static_cast<std::uint64_t>(static_cast<double>(now_ns - begin_ns_) / ns_per_probe_) + 1;
  if (due <= sent_ + skipped_) return std::nullopt;
  // A caller that comes late (a busy thread) catches up with a short burst; a stall's missed
  // probes beyond that are not made up.
  if (due - sent_ - skipped_ > kCatchUp) skipped_ = due - sent_ - kCatchUp;
  ++sent_;

  const std::size_t flow = next_flow_;
  next_flow_ = (next_flow_ + 1) % flows_.size();
  FlowState& state = state_[flow];
  const std::uint8_t ttl = state.next_ttl;
  const std::uint8_t last = state.destination_ttl.load(std::memory_order_relaxed);
  state.next_ttl = ttl >= (last != 0 ? last : max_ttl_) ? 1 : static_cast<std::uint8_t>(ttl + 1);
  state.hops[ttl - 1].probes.fetch_add(1, std::memory_order_relaxed);
  sequence_ = static_cast<std::uint16_t>((sequence_ + 1) & 0x0FFF);  // 12 bits beside the TTL
  return Probe{flow, ttl, sequence_};
}

void PathTracer::on_reply(const ProbeReply& reply) {
  const auto found = index_.find(key(reply.dst_address, reply.src_port));
  if (found == index_.end() || reply.ttl == 0 || reply.ttl > kMaxProbeTtl) return;
  FlowState& state = state_[found->second];
  HopState& hop = state.hops[reply.ttl - 1];
  // Several RX threads (one per queue) may book replies at once: a slot is claimed by
  // compare-exchange and counts are added atomically. Replies are rare; this is off the hot path.
  std::size_t slot = kResponders;
  for (std::size_t i = 0; i < kResponders && slot == kResponders; ++i) {
    std::uint32_t address = hop.address[i].load(std::memory_order_relaxed);
    if (address == 0 && hop.address[i].compare_exchange_strong(address, reply.responder, std::memory_order_relaxed)) {
      slot = i;
    } else if (address == reply.responder) {
      slot = i;
    }
  }
  if (slot == kResponders) {
    hop.beyond.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  hop.answers[slot].fetch_add(1, std::memory_order_relaxed);
  if (reply.damaged) hop.damaged[slot].fetch_add(1, std::memory_order_relaxed);
  if (reply.answer == ProbeAnswer::Unreachable) hop.unreachable[slot].fetch_add(1, std::memory_order_relaxed);
  if (reply.answer == ProbeAnswer::Destination) {
    hop.destination[slot].store(true, std::memory_order_relaxed);
    std::uint8_t known = state.destination_ttl.load(std::memory_order_relaxed);
    while ((known == 0 || reply.ttl < known) &&
           !state.destination_ttl.compare_exchange_weak(known, reply.ttl, std::memory_order_relaxed)) {
    }
  }
}

std::vector<TracedHop> PathTracer::hops(std::size_t flow) const {
  std::vector<TracedHop> out;
  if (flow >= flows_.size()) return out;
  const FlowState& state = state_[flow];
  const std::uint8_t destination = state.destination_ttl.load(std::memory_order_relaxed);
  std::uint8_t last = destination;
  if (last == 0) {
    for (std::uint8_t ttl = kMaxProbeTtl; ttl >= 1 && last == 0; --ttl) {
      if (state.hops[ttl - 1].probes.load(std::memory_order_relaxed) > 0) last = ttl;
    }
  }
  for (std::uint8_t ttl = 1; ttl <= last; ++ttl) {
    const HopState& hop = state.hops[ttl - 1];
    TracedHop out_hop;
    out_hop.ttl = ttl;
    out_hop.probes = hop.probes.load(std::memory_order_relaxed);
    std::array<std::uint64_t, kResponders> answers{};
    for (std::size_t i = 0; i < kResponders; ++i) answers[i] = hop.answers[i].load(std::memory_order_relaxed);
    const std::size_t best =
        static_cast<std::size_t>(std::max_element(answers.begin(), answers.end()) - answers.begin());
    if (answers[best] > 0) {
      out_hop.address = hop.address[best].load(std::memory_order_relaxed);
      out_hop.answers = answers[best];
      out_hop.damaged = hop.damaged[best].load(std::memory_order_relaxed);
      out_hop.unreachable = hop.unreachable[best].load(std::memory_order_relaxed);
      out_hop.destination = hop.destination[best].load(std::memory_order_relaxed);
    }
    for (std::size_t i = 0; i < kResponders; ++i) {
      if (i == best || answers[i] == 0) continue;
      out_hop.other_address = hop.address[i].load(std::memory_order_relaxed);
      out_hop.other_answers += answers[i];
    }
    out_hop.other_answers += hop.beyond.load(std::memory_order_relaxed);
    out.push_back(out_hop);
  }
  return out;
}

void put_path(const std::vector<TracedHop>& hops, proto::StreamCounters& stream) {
  for (const TracedHop& hop : hops) {
    proto::TraceHop& out = *stream.add_path();
    out.set_ttl(hop.ttl);
    if (hop.address != 0) out.set_address(ipv4_to_string(hop.address));
    out.set_probes(hop.probes);
    out.set_answers(hop.answers);
    out.set_damaged(hop.damaged);
    out.set_unreachable(hop.unreachable);
    if (hop.other_address != 0) out.set_other_address(ipv4_to_string(hop.other_address));
    out.set_other_answers(hop.other_answers);
    out.set_destination(hop.destination);
  }
}

}  // namespace tusk::path
