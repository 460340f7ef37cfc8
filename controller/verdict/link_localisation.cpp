#include "controller/verdict/link_localisation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/counter_names.hpp"
#include "common/units.hpp"
#include "common/wire_bounds.hpp"
#include "controller/verdict/link_evidence.hpp"
#include "controller/verdict/link_rates.hpp"
#include "controller/verdict/localiser.hpp"
#include "controller/verdict/path_faults.hpp"
#include "controller/verdict/stream_values.hpp"

#include "controller/verdict/localiser.hpp"

namespace tusk {

const char* to_string(FaultKind kind) {
  switch (kind) {
    case FaultKind::Loss:
      return "loss";
    case FaultKind::Damage:
      return "damage";
    case FaultKind::Failure:
      return "failure";
  }
  return "failure";
}

const char* to_string(Confidence confidence) {
  switch (confidence) {
    case Confidence::Low:
      return "low";
    case Confidence::Medium:
      return "medium";
    case Confidence::High:
      return "high";
  }
  return "low";
}

namespace localiser {
namespace {

bool judged_flow(const StreamVerdict& verdict) {
  return verdict.stream.kind() != "tx" && !informational_kind(verdict.stream.kind()) &&
         !verdict.stream.peer().empty() && verdict.stream.has_flow();
}

// Adds what one of the flow's judged streams failed on; the flow is the host's doing only when
// every failed check of every stream of it is.
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
    if (check.caveat.empty()) all_host = false;
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
    for (const std::size_t s : {flows[f].rx_stream, flows[f].tx_stream.value_or(flows[f].rx_stream)}) {
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
void read_path(const proto::StreamCounters& tx, TracedFlowPath& flow) {
  flow.nodes.push_back(tx.flow().src_address());
  // No probe goes past wire::kMaxPathHops, so a longer path is no path a tracer found.
  for (const auto& hop : tx.path()) {
    if (flow.nodes.size() > wire::kMaxPathHops) return;
    if (hop.address().empty()) return;  // unknown: the links past it are not guessed
    if (hop.destination()) {
      flow.nodes.push_back(tx.flow().dst_address());
      flow.reached = true;
      return;
    }
    flow.nodes.push_back(hop.address());
    if (hop.unreachable() * 2 > hop.answers()) return;
  }
}

}  // namespace

// The cable a directed link is one direction of: its two ends, in one order.
std::string cable_of(const std::string& key) {
  const auto arrow = key.find(" -> ");
  if (arrow == std::string::npos) return key;
  std::string a = key.substr(0, arrow), b = key.substr(arrow + 4);
  if (b < a) std::swap(a, b);
  return a + " <-> " + b;
}

NamedLink link_between(const FabricTopology* topology, const std::string& from, const std::string& to) {
  if (topology) return topology->link_between(from, to);
  const std::string key = fmt::format("{} -> {}", from, to);
  return NamedLink{key, key, nullptr, false};
}

Localiser::Localiser(const std::vector<StreamVerdict>& streams, const FabricTopology* topology,
                     const SwitchCounterEvidence* counters)
    : streams_(streams), topology_(topology), counters_(counters) {}

Localisation Localiser::run() {
  gather_flows();
  if (std::none_of(out_.flows.begin(), out_.flows.end(), [](const auto& f) { return f.failing; }))
    return std::move(out_);
  name_slow_receivers();
  gather_links();
  count_moved_cables();
  count_flows();
  for (const FaultKind kind : {FaultKind::Loss, FaultKind::Damage, FaultKind::Failure}) name_suspects(kind);
  rank_suspects();
  conclude();
  return std::move(out_);
}

// One flow per 5-tuple, whatever judges it: the receiver's stream (DPDK), or both ends of a QP
// (RDMA: the sender's flow and the receiver's sink); each with its traced path and named links.
void Localiser::gather_flows() {
  std::unordered_map<std::string, std::size_t> flow_of_key;
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    const StreamVerdict& judged = streams_[i];
    if (!judged_flow(judged)) continue;
    const auto [known, added] = flow_of_key.emplace(flow_text(judged.stream), out_.flows.size());
    if (added) {
      TracedFlowPath flow;
      flow.rx_stream = i;
      const bool sent_it = judged.stream.path_size() > 0;  // a sender's own judged stream
      flow.sender = sent_it ? judged.agent : judged.stream.peer();
      flow.receiver = sent_it ? judged.stream.peer() : judged.agent;
      out_.flows.push_back(std::move(flow));
    }
    read_failure(judged, out_.flows[known->second]);
  }
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    const auto& stream = streams_[i].stream;
    if (stream.path_size() == 0 || !stream.has_flow()) continue;
    const auto found = flow_of_key.find(flow_text(stream));
    if (found == flow_of_key.end()) continue;
    TracedFlowPath& flow = out_.flows[found->second];
    flow.tx_stream = i;
    flow.sender = streams_[i].agent;
    flow.receiver = stream.peer();
  }
  mark_slow_flows(streams_, out_.flows);
  for (auto& flow : out_.flows) {
    if (flow.tx_stream) read_path(streams_[*flow.tx_stream].stream, flow);
    for (std::size_t k = 0; k < flow.nodes.size(); ++k) {
      flow.node_names.push_back(node_name(topology_, flow.nodes[k]));
      if (k > 0) flow.links.push_back(link_between(topology_, flow.nodes[k - 1], flow.nodes[k]).key);
    }
  }
}

std::string Localiser::edge_name(const std::string& a, const std::string& b) const {
  return link_between(topology_, a, b).name;
}

// Receivers that dropped frames themselves: their flows' loss is theirs, not a link's.
void Localiser::name_slow_receivers() {
  std::map<std::string, std::vector<std::size_t>> into;
  for (std::size_t f = 0; f < out_.flows.size(); ++f) into[out_.flows[f].receiver].push_back(f);
  for (const auto& [agent, flows] : into) {
    const auto dropped =
        std::count_if(flows.begin(), flows.end(), [&](std::size_t f) { return out_.flows[f].host_side; });
    if (dropped == 0) continue;
    out_.hosts.push_back({agent,
                          "receiver cannot keep up",
                          fmt::format("{} of its {} incoming flows lost frames that {} dropped itself (host drops: "
                                      "ring, socket or NIC buffers), not on a link",
                                      dropped, flows.size(), agent),
                          {fmt::format("Lower the rate, or give {}'s agent more cores (and its NIC more receive "
                                       "descriptors), then test again.",
                                       agent),
                           "Its loss says nothing about the links: no link is blamed for it."}});
  }
}

// Link by link: which flows cross each link, and what their probes saw at it and a hop before it.
void Localiser::gather_links() {
  links_of_flow_.resize(out_.flows.size());
  for (std::size_t f = 0; f < out_.flows.size(); ++f) {
    const TracedFlowPath& flow = out_.flows[f];
    if (flow.host_side) continue;
    if (flow.nodes.size() < 2) {
      untraced_ += flow.failing ? 1 : 0;
      continue;
    }
    const auto& hops = streams_[*flow.tx_stream].stream.path();
    std::set<std::string> seen;
    bool moved_seen = false;
    for (std::size_t k = 1; k < flow.nodes.size(); ++k) {
      const NamedLink named = link_between(topology_, flow.nodes[k - 1], flow.nodes[k]);
      if (!seen.insert(named.key).second) continue;
      LinkData& link = links_[named.key];
      link.named = named;
      (flow.failing ? link.failing : link.passing).insert(f);
      links_of_flow_[f].push_back(&link);
      if (flow.failing) link.faults.insert(flow.faults.begin(), flow.faults.end());
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
      if (k + 1 < flow.nodes.size()) {
        const auto& after = hops.Get(static_cast<int>(k));
        link.probes.probes_after += after.probes();
        link.probes.answers_after += after.answers();
      }
      link.far_end = k < flow.node_names.size() ? flow.node_names[k] : flow.nodes[k];
    }
  }
  compare_far_ends();
  for (auto& [key, link] : links_) {
    finish_probe_evidence(link.probes);
    link.index = static_cast<std::uint32_t>(link_by_index_.size());
    link_by_index_.emplace_back(&key, &link);
  }
}

// Each link's far end as its other links into it saw it: the answers to the flows that reach it
// another way, and their hop before (the sender, for a first hop, answers all).
void Localiser::compare_far_ends() {
  struct Answers {
    std::uint64_t probes = 0, answers = 0, probes_before = 0, answers_before = 0;
  };
  const auto of = [](const ProbeEvidence& p) {
    return Answers{p.probes, p.answers, p.first_hop ? p.probes : p.probes_before,
                   p.first_hop ? p.probes : p.answers_before};
  };
  std::map<std::string, Answers> into;
  for (const auto& [key, link] : links_) {
    const Answers mine = of(link.probes);
    Answers& all = into[link.far_end];
    all.probes += mine.probes;
    all.answers += mine.answers;
    all.probes_before += mine.probes_before;
    all.answers_before += mine.answers_before;
  }
  for (auto& [key, link] : links_) {
    const Answers mine = of(link.probes);
    const Answers& all = into.at(link.far_end);
    link.probes.probes_elsewhere = all.probes - mine.probes;
    link.probes.answers_elsewhere = all.answers - mine.answers;
    link.probes.probes_elsewhere_before = all.probes_before - mine.probes_before;
    link.probes.answers_elsewhere_before = all.answers_before - mine.answers_before;
  }
}

// A cable that went down shows in both directions' flows: those over it die or move away. Where
// a router drops what it has no route for, probes to it die too, so the loss seems to start at
// the router, a hop before the cable that failed; the flows that moved name the cable itself.
void Localiser::count_moved_cables() {
  for (const auto& [key, link] : links_) {
    auto& [moved, probes] = moved_by_cable_[cable_of(key)];
    moved += link.moved;
    probes += link.probes.probes;
  }
}

std::uint64_t Localiser::moved_over(const std::string& key) const {
  const auto it = moved_by_cable_.find(cable_of(key));
  return it == moved_by_cable_.end() ? 0 : it->second.first;
}

// What the switches counted on the link `key`, when both its direction's ends or one were read.
const CountedDirection* Localiser::counted_on(const std::string& key) const {
  return counters_ ? counters_->direction(key) : nullptr;
}

bool Localiser::counts_loss(const std::string& key) const {
  const CountedDirection* counted = counted_on(key);
  return counted && counted->counts_loss();
}

// The switches read this link's receiving end (or both ends) and counted no loss on it.
bool Localiser::counts_clean(const std::string& key) const {
  const CountedDirection* counted = counted_on(key);
  return counted && counted->receiver_read && !counted->counts_loss();
}

bool Localiser::cable_moved(const std::string& key) const {
  const auto it = moved_by_cable_.find(cable_of(key));
  if (it == moved_by_cable_.end()) return false;
  const auto& [moved, probes] = it->second;
  return moved >= 5 && static_cast<double>(moved) >= 0.005 * static_cast<double>(probes);
}

double Localiser::strength(const LinkData& l) {
  const double z = std::max(l.probes.loss_z, l.probes.damage_z);
  return std::isnan(z) ? -std::numeric_limits<double>::infinity() : z;
}

// What flow f's judged stream counted of `kind`: the frames that could have met it and those
// that did; nothing where the stream does not count them (RDMA QPs, or a model of a run).
std::optional<FlowEvents> Localiser::counted(std::size_t f, FaultKind kind) const {
  const auto& stream = streams_[out_.flows[f].rx_stream].stream;
  const auto received = counter_of(stream, counters::kRxFrames);
  if (!received) return std::nullopt;
  FlowEvents counts;
  if (kind == FaultKind::Loss) {
    const auto lost = counter_of(stream, counters::kLostFrames);
    if (!lost) return std::nullopt;
    // Bounded: a peer's counters are summed, and must not wrap.
    counts.events = std::min<std::uint64_t>(*lost, kMaxCount) +
                    std::min<std::uint64_t>(counter_or_zero(stream, counters::kGapLostFrames), kMaxCount);
    counts.trials = std::min<std::uint64_t>(*received, kMaxCount) + counts.events;
  } else {
    const auto damaged = counter_of(stream, counters::kErroredFrames);
    if (!damaged) return std::nullopt;
    counts.trials = std::min<std::uint64_t>(*received, kMaxCount);
    counts.events = std::min(*damaged, counts.trials);
  }
  return counts;
}

// Each traced flow's evidence of each kind, read once. A flow judged only pass or fail is one
// trial, and an event when it failed on what no count of it shows (latency, a QP's slowness, a
// model's verdict); a flow whose counts show events is none of that kind's.
void Localiser::count_flows() {
  evidence_.resize(out_.flows.size());
  for (std::size_t f = 0; f < out_.flows.size(); ++f) {
    if (links_of_flow_[f].empty()) continue;
    auto& of_flow = evidence_[f];
    of_flow[static_cast<std::size_t>(FaultKind::Loss)] = counted(f, FaultKind::Loss);
    of_flow[static_cast<std::size_t>(FaultKind::Damage)] = counted(f, FaultKind::Damage);
    const bool counts_show_events =
        std::any_of(of_flow.begin(), of_flow.end(), [](const auto& c) { return c && c->events > 0; });
    if (counts_show_events) continue;
    FlowEvents judged;
    judged.trials = 1;
    judged.events = out_.flows[f].failing ? 1 : 0;
    of_flow[static_cast<std::size_t>(FaultKind::Failure)] = judged;
  }
}

}  // namespace localiser

Localisation localise(const std::vector<StreamVerdict>& streams, const FabricTopology* topology,
                      const SwitchCounterEvidence* counters) {
  return localiser::Localiser(streams, topology, counters).run();
}

}  // namespace tusk
