#include "controller/verdict/flow_table.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include "common/counter_names.hpp"
#include "common/wire_bounds.hpp"
#include "controller/verdict/localiser.hpp"
#include "controller/verdict/path_faults.hpp"
#include "controller/verdict/stream_values.hpp"

namespace tusk {
namespace {

using localiser::kMaxCount;

bool judged_flow(const StreamVerdict& verdict) {
  return verdict.stream.kind() != "tx" && !informational_kind(verdict.stream.kind()) &&
         !verdict.stream.peer().empty() && verdict.stream.has_flow();
}

// Adds what one of the flow's judged streams failed on; the flow is the host's doing only when
// every failed check of every stream of it is (a receiver's own drops, a peer the test lost).
void read_failure(const StreamVerdict& verdict, TracedFlowPath& flow) {
  if (verdict.passed()) return;
  const bool first = !flow.failing;
  flow.failing = true;
  bool all_host = true;
  for (const auto& check : verdict.checks) {
    if (check.passed) continue;
    if (std::find(flow.faults.begin(), flow.faults.end(), check.threshold.metric) == flow.faults.end()) {
      flow.faults.push_back(check.threshold.metric);
    }
    if (check.not_the_link == ThresholdCheck::NotTheLink::No) all_host = false;
    if (check.not_the_link == ThresholdCheck::NotTheLink::HostDrops) flow.host_drops = true;
  }
  flow.host_side = (first || flow.host_side) && all_host;
}

// Flows far slower than their siblings between the same two hosts fail here even when no
// threshold judged them (RDMA QPs that retransmit through a lossy link): sorted by throughput,
// the siblings below the widest gap are slow when the gap is a factor of kSlowGap or more.
constexpr double kSlowGap = 2.0;
constexpr const char* kSlowFault = "throughput_below_siblings";

void mark_slow_flows(const std::vector<StreamVerdict>& streams, std::vector<TracedFlowPath>& flows) {
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<double, std::size_t>>> by_hosts;
  for (std::size_t f = 0; f < flows.size(); ++f) {
    double throughput = -1;
    for (const std::size_t s : {*flows[f].rx_stream, flows[f].tx_stream.value_or(*flows[f].rx_stream)}) {
      const auto& metrics = streams[s].metrics;
      if (const auto it = metrics.find("throughput_bps"); it != metrics.end())
        throughput = std::max(throughput, it->second);
    }
    if (throughput >= 0) by_hosts[{flows[f].sender, flows[f].receiver}].emplace_back(throughput, f);
  }
  for (auto& [hosts, siblings] : by_hosts) {
    if (siblings.size() < 3) continue;  // two flows' difference may be either's
    std::sort(siblings.begin(), siblings.end());
    double widest = 1;
    std::size_t below = 0;  // siblings [0, below) are slow
    for (std::size_t i = 0; i + 1 < siblings.size(); ++i) {
      const double low = siblings[i].first, high = siblings[i + 1].first;
      const double gap = low > 0 ? high / low : (high > 0 ? std::numeric_limits<double>::infinity() : 1);
      if (gap > widest) {
        widest = gap;
        below = i + 1;
      }
    }
    if (widest < kSlowGap) continue;
    for (std::size_t i = 0; i < below; ++i) {
      TracedFlowPath& flow = flows[siblings[i].second];
      if (!flow.failing) flow.host_side = false;
      flow.failing = true;
      flow.faults.push_back(kSlowFault);
    }
  }
}

// The path's nodes: the source, each hop in TTL order until one is unknown, a router with no
// route onward, or the destination.
std::vector<std::string> read_path(const proto::StreamCounters& tx, bool& reached) {
  std::vector<std::string> nodes{tx.flow().src_address()};
  // No probe goes past wire::kMaxPathHops, so a longer path is no path a tracer found.
  for (const auto& hop : tx.path()) {
    if (nodes.size() > wire::kMaxPathHops) break;
    if (hop.address().empty()) break;  // unknown: the links past it are not guessed
    if (hop.destination()) {
      nodes.push_back(tx.flow().dst_address());
      reached = true;
      break;
    }
    nodes.push_back(hop.address());
    if (hop.unreachable() * 2 > hop.answers()) break;
  }
  return nodes;
}

// One flow per 5-tuple, whatever judges it: the receiver's stream (DPDK), or both ends of a QP
// (RDMA: the sender's flow and the receiver's sink).
std::vector<TracedFlowPath> gather_flows(const std::vector<StreamVerdict>& streams) {
  std::vector<TracedFlowPath> flows;
  std::unordered_map<std::string, std::size_t> flow_of_key;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const StreamVerdict& judged = streams[i];
    if (!judged_flow(judged)) continue;
    const auto [known, added] = flow_of_key.emplace(flow_text(judged.stream), flows.size());
    if (added) {
      TracedFlowPath flow;
      flow.rx_stream = i;
      const bool sent_it = judged.stream.path_size() > 0;  // a sender's own judged stream
      flow.sender = sent_it ? judged.agent : judged.stream.peer();
      flow.receiver = sent_it ? judged.stream.peer() : judged.agent;
      flows.push_back(std::move(flow));
    }
    read_failure(judged, flows[known->second]);
  }
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const auto& stream = streams[i].stream;
    if (stream.path_size() == 0 || !stream.has_flow()) continue;
    const auto found = flow_of_key.find(flow_text(stream));
    if (found == flow_of_key.end()) continue;
    TracedFlowPath& flow = flows[found->second];
    flow.tx_stream = i;
    flow.sender = streams[i].agent;
    flow.receiver = stream.peer();
  }
  mark_slow_flows(streams, flows);
  return flows;
}

// What the receiver's stream counted of loss and damage, bounded so that sums cannot wrap.
void read_counts(const proto::StreamCounters& stream, FlowRecord& flow) {
  const auto received = counter_of(stream, counters::kRxFrames);
  if (!received) return;
  if (const auto lost = counter_of(stream, counters::kLostFrames)) {
    flow.loss_events = std::min<std::uint64_t>(*lost, kMaxCount) +
                       std::min<std::uint64_t>(counter_or_zero(stream, counters::kGapLostFrames), kMaxCount);
    flow.loss_trials = std::min<std::uint64_t>(*received, kMaxCount) + flow.loss_events;
    flow.flags |= FlowRecord::kCountsLoss;
  }
  if (const auto damaged = counter_of(stream, counters::kErroredFrames)) {
    flow.damage_trials = std::min<std::uint64_t>(*received, kMaxCount);
    flow.damage_events = std::min(*damaged, flow.damage_trials);
    flow.flags |= FlowRecord::kCountsDamage;
  }
}

// An RDMA flow's own QP's retransmissions as its loss: each a packet (or, one NAK for a burst, the
// first of several) the transport sent again, of the packets the flow sent; so the rate is a lower
// bound of the path's loss. Only from a NIC that counts per QP (the agent omits them elsewhere).
void read_transport_counts(const proto::StreamCounters& stream, FlowRecord& flow) {
  const auto packets = counter_of(stream, counters::kQpTxPackets);
  const auto retransmits = counter_of(stream, counters::kQpRetransmits);
  if (!packets || !retransmits || *packets == 0) return;
  flow.loss_trials = std::min<std::uint64_t>(*packets, kMaxCount);
  flow.loss_events = std::min(*retransmits, flow.loss_trials);
  flow.flags |= FlowRecord::kCountsLoss;
}

// Its median latency: the receiver's one-way (DPDK), else the sender's completions' (RDMA).
// Bounded: a gauge is its agent's word.
void read_latency(const proto::StreamCounters& rx, const proto::StreamCounters* tx, FlowRecord& flow) {
  auto latency = gauge_of(rx, counters::kLatencyP50Ns);
  if (!latency && tx) latency = gauge_of(*tx, counters::kLatencyP50Ns);
  if (latency && std::isfinite(*latency) && *latency >= 0 && *latency < 1e12)
    flow.latency_ns = static_cast<float>(*latency);
}

void add_counts(ProbeEvidence& into, const ProbeEvidence& from) {
  into.probes += from.probes;
  into.answers += from.answers;
  into.damaged += from.damaged;
  into.probes_before += from.probes_before;
  into.answers_before += from.answers_before;
  into.damaged_before += from.damaged_before;
  into.probes_after += from.probes_after;
  into.answers_after += from.answers_after;
  into.first_hop = into.first_hop || from.first_hop;
}

}  // namespace

std::uint32_t FlowTable::agent_id(const std::string& name) {
  const auto [it, added] = agent_ids_.try_emplace(name, static_cast<std::uint32_t>(agents_.size()));
  if (added) agents_.push_back(name);
  return it->second;
}

std::uint32_t FlowTable::link_id(const NamedLink& named, const std::string& near_end, const std::string& far_end) {
  const auto [it, added] = link_ids_.try_emplace(named.key, static_cast<std::uint32_t>(links_.size()));
  if (added) links_.push_back(FlowLink{named, near_end, far_end, {}, 0});
  return it->second;
}

std::uint32_t FlowTable::fault_set_id(std::vector<std::string> faults) {
  const auto [it, added] = fault_set_ids_.try_emplace(faults, static_cast<std::uint32_t>(fault_sets_.size()));
  if (added) fault_sets_.push_back(std::move(faults));
  return it->second;
}

// Link by link along the flow's path: what its probes saw at the link, a hop before and a hop past.
void FlowTable::tally(const FlowRecord& flow, const proto::StreamCounters* tx) {
  const auto links = links_of(flows_.size() - 1);
  if (flow.has(FlowRecord::kHostSide)) return;
  if (links.empty()) {
    untraced_failing_ += flow.has(FlowRecord::kFailing) ? 1 : 0;
    return;
  }
  const auto& hops = tx->path();
  std::uint32_t hop = ProbeHop::kFirst;
  for (std::size_t k = 0; k < links.size(); ++k) {
    hop = probe_hops_.hop(hop, links[k], flow.sender);
    const auto& asked = hops.Get(static_cast<int>(k));
    probe_hops_.add(hop, asked.probes(), asked.answers(), asked.damaged());
  }
  std::set<std::uint32_t> seen;
  bool moved_seen = false;
  for (std::size_t k = 1; k <= links.size(); ++k) {
    if (!seen.insert(links[k - 1]).second) continue;
    FlowLink& link = links_[links[k - 1]];
    const auto& here = hops.Get(static_cast<int>(k - 1));
    link.probes.probes += here.probes();
    link.probes.answers += here.answers();
    link.probes.damaged += here.damaged();
    // Where the path first moved is the link it moved off; hops after that differ as a consequence.
    if (!moved_seen && here.other_answers() > 0) {
      link.moved += here.other_answers();
      moved_seen = true;
    }
    if (k == 1) {
      link.probes.first_hop = true;
    } else {
      const auto& before = hops.Get(static_cast<int>(k - 2));
      link.probes.probes_before += before.probes();
      link.probes.answers_before += before.answers();
      link.probes.damaged_before += before.damaged();
    }
    if (k < links.size()) {
      const auto& after = hops.Get(static_cast<int>(k));
      link.probes.probes_after += after.probes();
      link.probes.answers_after += after.answers();
    }
  }
}

void FlowTable::add(const std::vector<StreamVerdict>& streams, const FabricTopology* topology, std::uint32_t step) {
  for (TracedFlowPath& gathered : gather_flows(streams)) {
    FlowRecord flow;
    flow.rx_stream = static_cast<std::uint32_t>(*gathered.rx_stream);
    flow.tx_stream = gathered.tx_stream ? static_cast<std::uint32_t>(*gathered.tx_stream) : kNoStream;
    flow.sender = agent_id(gathered.sender);
    flow.receiver = agent_id(gathered.receiver);
    flow.faults = fault_set_id(std::move(gathered.faults));
    flow.step = step;
    flow.flags = static_cast<std::uint8_t>((gathered.failing ? FlowRecord::kFailing : 0) |
                                           (gathered.host_side ? FlowRecord::kHostSide : 0) |
                                           (gathered.host_side && gathered.host_drops ? FlowRecord::kHostDrops : 0));
    read_counts(streams[*gathered.rx_stream].stream, flow);
    const proto::StreamCounters* tx = gathered.tx_stream ? &streams[*gathered.tx_stream].stream : nullptr;
    if (tx && !flow.has(FlowRecord::kCountsLoss)) read_transport_counts(*tx, flow);
    read_latency(streams[*gathered.rx_stream].stream, tx, flow);
    flow.links_at = static_cast<std::uint32_t>(path_links_.size());
    if (tx) {
      bool reached = false;
      const std::vector<std::string> nodes = read_path(*tx, reached);
      if (reached) flow.flags |= FlowRecord::kReached;
      std::string near_end = node_name(topology, nodes.front());
      for (std::size_t k = 1; k < nodes.size(); ++k) {
        std::string far_end = node_name(topology, nodes[k]);
        path_links_.push_back(link_id(localiser::link_between(topology, nodes[k - 1], nodes[k]), near_end, far_end));
        near_end = std::move(far_end);
      }
    }
    flow.link_count = static_cast<std::uint8_t>(path_links_.size() - flow.links_at);
    ReceiverTally& receiver = receivers_[flow.receiver];
    ++receiver.flows;
    receiver.host_drops += flow.has(FlowRecord::kHostDrops) ? 1 : 0;
    flows_.push_back(flow);
    tally(flow, tx);
  }
}

namespace {

// A flow's identity as a well-mixed 64-bit number (splitmix64's finaliser): summed per link, equal
// sums mean the same clean flows but with odds of 2^-64.
std::uint64_t mixed(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

void FlowTable::sum_clean_flow(const FlowRecord& flow, std::span<const std::uint32_t> links) {
  const std::uint64_t identity = mixed(clean_flows_++);
  if (!flow.has(FlowRecord::kReached)) ++clean_partial_;
  const auto one_of = [](std::uint32_t& sole, std::uint32_t agent) {
    sole = sole == FlowLink::kMixed || sole == agent ? agent : FlowLink::kMixed;
  };
  for (std::size_t k = 0; k < links.size(); ++k) {
    if (std::find(links.begin(), links.begin() + static_cast<long>(k), links[k]) !=
        links.begin() + static_cast<long>(k))
      continue;  // crossed twice: once
    FlowLink& link = links_[links[k]];
    const auto add = [&](FaultKind kind, double trials) {
      CleanFlows& sums = link.clean[static_cast<std::size_t>(kind)];
      sums.trials += trials;
      ++sums.flows;
      sums.signature += identity;
    };
    if (flow.has(FlowRecord::kCountsLoss) && flow.loss_trials > 0)
      add(FaultKind::Loss, static_cast<double>(flow.loss_trials));
    if (flow.has(FlowRecord::kCountsDamage) && flow.damage_trials > 0) {
      add(FaultKind::Damage, static_cast<double>(flow.damage_trials));
    }
    add(FaultKind::Failure, 1);
    if (k == 0) {
      one_of(link.clean_sender, flow.sender);
      ++link.clean_first;
    }
    if (k + 1 == links.size() && flow.has(FlowRecord::kReached)) {
      one_of(link.clean_receiver, flow.receiver);
      ++link.clean_last;
    }
  }
}

void FlowTable::append(const FlowTable& other, std::uint32_t step, const std::vector<std::uint32_t>& stream_index,
                       bool sum_clean) {
  // Its clean flows' identities would repeat this table's: a step's table keeps every flow.
  if (other.clean_flows_ > 0) throw std::logic_error("a flow table that summed clean flows joins no other");
  std::vector<std::uint32_t> agent_of(other.agents_.size()), link_of(other.links_.size()),
      faults_of(other.fault_sets_.size());
  for (std::size_t a = 0; a < other.agents_.size(); ++a) agent_of[a] = agent_id(other.agents_[a]);
  for (std::size_t l = 0; l < other.links_.size(); ++l) {
    const FlowLink& theirs = other.links_[l];
    link_of[l] = link_id(theirs.named, theirs.near_end, theirs.far_end);
    FlowLink& mine = links_[link_of[l]];
    add_counts(mine.probes, theirs.probes);
    mine.moved += theirs.moved;
  }
  probe_hops_.append(other.probe_hops_, link_of, agent_of);
  for (std::size_t s = 0; s < other.fault_sets_.size(); ++s) faults_of[s] = fault_set_id(other.fault_sets_[s]);
  const auto renumbered = [&](std::uint32_t stream) {
    return stream < stream_index.size() ? stream_index[stream] : kNoStream;
  };
  std::vector<std::uint32_t> links;
  for (std::size_t f = 0; f < other.flows_.size(); ++f) {
    FlowRecord flow = other.flows_[f];
    if (sum_clean && flow.clean()) {
      links.clear();
      for (const std::uint32_t link : other.links_of(f)) links.push_back(link_of[link]);
      flow.sender = agent_of[flow.sender];
      flow.receiver = agent_of[flow.receiver];
      sum_clean_flow(flow, links);
      continue;
    }
    flow.rx_stream = renumbered(flow.rx_stream);
    flow.tx_stream = renumbered(flow.tx_stream);
    flow.sender = agent_of[flow.sender];
    flow.receiver = agent_of[flow.receiver];
    flow.faults = faults_of[flow.faults];
    flow.step = step;
    flow.links_at = static_cast<std::uint32_t>(path_links_.size());
    for (const std::uint32_t link : other.links_of(f)) path_links_.push_back(link_of[link]);
    flows_.push_back(flow);
  }
  for (const auto& [receiver, tally] : other.receivers_) {
    ReceiverTally& mine = receivers_[agent_of[receiver]];
    mine.flows += tally.flows;
    mine.host_drops += tally.host_drops;
  }
  untraced_failing_ += other.untraced_failing_;
}

TracedFlowPath FlowTable::traced(std::size_t f) const {
  const FlowRecord& flow = flows_[f];
  TracedFlowPath path;
  if (flow.rx_stream != kNoStream) path.rx_stream = flow.rx_stream;
  if (flow.tx_stream != kNoStream) path.tx_stream = flow.tx_stream;
  path.sender = agents_[flow.sender];
  path.receiver = agents_[flow.receiver];
  for (const std::uint32_t id : links_of(f)) {
    const FlowLink& link = links_[id];
    if (path.node_names.empty()) path.node_names.push_back(link.near_end);
    path.node_names.push_back(link.far_end);
    path.links.push_back(link.named.key);
  }
  path.reached = flow.has(FlowRecord::kReached);
  path.failing = flow.has(FlowRecord::kFailing);
  path.host_side = flow.has(FlowRecord::kHostSide);
  path.host_drops = flow.has(FlowRecord::kHostDrops);
  path.faults = fault_sets_[flow.faults];
  return path;
}

std::vector<TracedFlowPath> traced_flows(const Localisation& found) {
  std::vector<TracedFlowPath> flows;
  if (!found.flows) return flows;
  flows.reserve(found.flows->size());
  for (std::size_t f = 0; f < found.flows->size(); ++f) flows.push_back(found.flows->traced(f));
  return flows;
}

std::size_t FlowTable::bytes() const {
  return flows_.capacity() * sizeof(FlowRecord) + path_links_.capacity() * sizeof(std::uint32_t) +
         links_.capacity() * sizeof(FlowLink) + probe_hops_.bytes();
}

}  // namespace tusk
