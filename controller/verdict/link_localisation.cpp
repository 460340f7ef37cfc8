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
#include "controller/verdict/path_faults.hpp"
#include "controller/verdict/stream_values.hpp"

namespace tusk {
namespace {

// A counter an agent sent, bounded so that two of them add up without wrapping.
constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 62;

struct LinkData {
  NamedLink named;
  std::set<std::size_t> failing, passing;  // flows
  ProbeEvidence probes;
  std::set<std::string> faults;
  // Probes past this link that another address answered: the flows' path moved off the link for a
  // while (a route withdrawn when it went down).
  std::uint64_t moved = 0;
  std::uint32_t index = 0;  // in the rate fit
};

// The cable a directed link is one direction of: its two ends, in one order.
std::string cable_of(const std::string& key) {
  const auto arrow = key.find(" -> ");
  if (arrow == std::string::npos) return key;
  std::string a = key.substr(0, arrow), b = key.substr(arrow + 4);
  if (b < a) std::swap(a, b);
  return a + " <-> " + b;
}

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

NamedLink link_between(const FabricTopology* topology, const std::string& from, const std::string& to) {
  if (topology) return topology->link_between(from, to);
  const std::string key = fmt::format("{} -> {}", from, to);
  return NamedLink{key, key, nullptr, false};
}

}  // namespace

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

namespace {

// One localisation, step by step: the flows and their traced paths, the receivers that dropped
// frames themselves, the links the traced flows cross, then for each kind of fault the links'
// rates fitted to what the flows measured (link_rates.hpp), and a suspect for every link whose
// rate is significantly above zero and explains a failing flow.
class Localiser {
 public:
  Localiser(const std::vector<StreamVerdict>& streams, const FabricTopology* topology,
            const SwitchCounterEvidence* counters)
      : streams_(streams), topology_(topology), counters_(counters) {}

  Localisation run() {
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

 private:
  // One flow per 5-tuple, whatever judges it: the receiver's stream (DPDK), or both ends of a QP
  // (RDMA: the sender's flow and the receiver's sink); each with its traced path and named links.
  void gather_flows() {
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

  std::string edge_name(const std::string& a, const std::string& b) const { return link_between(topology_, a, b).name; }

  // Receivers that dropped frames themselves: their flows' loss is theirs, not a link's.
  void name_slow_receivers() {
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
  void gather_links() {
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
      }
    }
    for (auto& [key, link] : links_) {
      finish_probe_evidence(link.probes);
      link.index = static_cast<std::uint32_t>(link_by_index_.size());
      link_by_index_.emplace_back(&key, &link);
    }
  }

  // A cable that went down shows in both directions' flows: those over it die or move away. Where
  // a router drops what it has no route for, probes to it die too, so the loss seems to start at
  // the router, a hop before the cable that failed; the flows that moved name the cable itself.
  void count_moved_cables() {
    for (const auto& [key, link] : links_) {
      auto& [moved, probes] = moved_by_cable_[cable_of(key)];
      moved += link.moved;
      probes += link.probes.probes;
    }
  }

  std::uint64_t moved_over(const std::string& key) const {
    const auto it = moved_by_cable_.find(cable_of(key));
    return it == moved_by_cable_.end() ? 0 : it->second.first;
  }

  // What the switches counted on the link `key`, when both its direction's ends or one were read.
  const CountedDirection* counted_on(const std::string& key) const {
    return counters_ ? counters_->direction(key) : nullptr;
  }
  bool counts_loss(const std::string& key) const {
    const CountedDirection* counted = counted_on(key);
    return counted && counted->counts_loss();
  }
  // The switches read this link's receiving end (or both ends) and counted no loss on it.
  bool counts_clean(const std::string& key) const {
    const CountedDirection* counted = counted_on(key);
    return counted && counted->receiver_read && !counted->counts_loss();
  }

  bool cable_moved(const std::string& key) const {
    const auto it = moved_by_cable_.find(cable_of(key));
    if (it == moved_by_cable_.end()) return false;
    const auto& [moved, probes] = it->second;
    return moved >= 5 && static_cast<double>(moved) >= 0.005 * static_cast<double>(probes);
  }

  static double strength(const LinkData& l) {
    const double z = std::max(l.probes.loss_z, l.probes.damage_z);
    return std::isnan(z) ? -std::numeric_limits<double>::infinity() : z;
  }

  // What flow f's judged stream counted of `kind`: the frames that could have met it and those
  // that did; nothing where the stream does not count them (RDMA QPs, or a model of a run).
  std::optional<FlowEvents> counted(std::size_t f, FaultKind kind) const {
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
  void count_flows() {
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

  // Fits the links' rates of `kind` and names those significantly above zero that explain a
  // failing flow: a link, or a host when the link is where every flow through it starts or ends.
  void name_suspects(FaultKind kind) {
    std::vector<FlowEvents> observed(out_.flows.size());
    bool any_events = false;
    for (std::size_t f = 0; f < out_.flows.size(); ++f) {
      if (links_of_flow_[f].empty()) continue;
      auto events = evidence_[f][static_cast<std::size_t>(kind)];
      if (!events) continue;
      for (const LinkData* link : links_of_flow_[f]) events->links.push_back(link->index);
      any_events = any_events || events->events > 0;
      observed[f] = std::move(*events);
    }
    if (!any_events) return;
    for (LinkRate& rate : estimate_link_rates(observed, link_by_index_.size())) {
      std::erase_if(rate.explains, [&](std::uint32_t f) { return !out_.flows[f].failing; });
      if (rate.explains.empty()) continue;  // significant, but within what the test allows
      std::vector<std::string> group;
      for (const std::uint32_t link : rate.links) group.push_back(*link_by_index_[link].first);
      order_twins(group);
      if (name_host_end(group.front(), rate, kind)) continue;
      out_.suspects.push_back(suspect_of(group, rate, kind));
    }
  }

  // A link where every flow through it starts (or ends) at one host is that host's own link:
  // its NIC, optic or cable, named at the host.
  bool name_host_end(const std::string& key, const LinkRate& rate, FaultKind kind) {
    const auto at = [&](bool receive) -> std::optional<std::string> {
      std::optional<std::string> agent;
      for (const std::uint32_t f : rate.flows) {
        const TracedFlowPath& flow = out_.flows[f];
        if (flow.links.empty() || (receive ? flow.links.back() : flow.links.front()) != key) return std::nullopt;
        if (receive && !flow.reached) return std::nullopt;
        const std::string& end = receive ? flow.receiver : flow.sender;
        if (agent && *agent != end) return std::nullopt;
        agent = end;
      }
      return agent;
    };
    bool receive = false;
    std::optional<std::string> agent = at(false);
    if (!agent) {
      agent = at(true);
      receive = true;
    }
    if (!agent) return false;
    const std::string edge = links_.at(key).named.name;
    out_.hosts.push_back(
        {*agent,
         receive ? "NIC, optic or cable (receive side)" : "NIC, optic or cable (transmit side)",
         fmt::format("{} on {} ({}), {}: the fault is where they {}, at {} or its link", what_it_does(rate, kind), edge,
                     interval_text(rate, kind), explained_text(rate), receive ? "meet" : "start", *agent),
         {fmt::format("Read {}'s NIC counters (ethtool -S: {}) and the switch port's {} counters{}.", *agent,
                      receive ? "rx CRC errors, discards, FEC" : "tx errors, FEC", receive ? "transmit" : "receive",
                      receive ? "" : " (CRC, symbol errors)"),
          fmt::format(
              "Reseat and clean the cable and optics of {}; swap the optic to see whether the fault follows it.",
              edge)}});
    return true;
  }

  static std::string what_it_does(const LinkRate& rate, FaultKind kind) {
    switch (kind) {
      case FaultKind::Loss:
        return fmt::format("loses {} of the frames", units::format_percent(rate.rate));
      case FaultKind::Damage:
        return fmt::format("damages {} of the frames", units::format_percent(rate.rate));
      case FaultKind::Failure:
        break;
    }
    return "fails the flows";
  }

  static std::string interval_text(const LinkRate& rate, FaultKind kind) {
    if (kind == FaultKind::Failure) return "judged pass or fail only";
    return fmt::format("95 % interval {} to {}", units::format_percent(rate.low), units::format_percent(rate.high));
  }

  std::string explained_text(const LinkRate& rate) const {
    return fmt::format("which explains {} of the {} flows through it", rate.explains.size(), rate.flows.size());
  }

  // The links the same flows cross, the likeliest first. The same flows cross them in one order:
  // where loss starts on two of them, the first is where it starts for certain; past it, a second
  // fault or a router that answers fewer probes (ICMP rate limits, a busy control plane) both add
  // loss, and neither is told apart.
  void order_twins(std::vector<std::string>& group) const {
    const LinkData& any = links_.at(group.front());
    const std::size_t some_flow = any.failing.empty() ? *any.passing.begin() : *any.failing.begin();
    const auto& along = out_.flows[some_flow].links;
    const auto position = [&](const std::string& key) {
      return std::find(along.begin(), along.end(), key) - along.begin();
    };
    std::sort(group.begin(), group.end(), [&](const std::string& a, const std::string& b) {
      const LinkData& la = links_.at(a);
      const LinkData& lb = links_.at(b);
      if (cable_moved(a) != cable_moved(b)) return cable_moved(a);
      // A switch counts every frame: where one end counted the loss and the other's counted
      // none, the counters decide, whatever the (policed) probes say.
      if (counts_loss(a) && counts_clean(b)) return true;
      if (counts_loss(b) && counts_clean(a)) return false;
      const bool starts_a = la.probes.starts_here(), starts_b = lb.probes.starts_here();
      if (starts_a != starts_b) return starts_a;
      if (starts_a && position(a) != position(b)) return position(a) < position(b);
      if (strength(la) != strength(lb)) return strength(la) > strength(lb);
      return a < b;
    });
  }

  // The suspect the group's first link is, with what tells it from the others and why.
  LinkSuspect suspect_of(const std::vector<std::string>& group, const LinkRate& rate, FaultKind kind) const {
    const std::string& winner = group.front();
    const LinkData& chosen = links_.at(winner);
    const bool moved_decides = group.size() > 1 && cable_moved(winner) && !cable_moved(group[1]);
    const bool counters_decide = !moved_decides && group.size() > 1 && counts_loss(winner) && counts_clean(group[1]);
    const bool probes_decide = moved_decides || counters_decide || (group.size() > 1 && chosen.probes.starts_here());
    const bool tie = group.size() > 1 && !probes_decide;

    LinkSuspect suspect;
    suspect.key = winner;
    suspect.name = chosen.named.name;
    suspect.kind = kind;
    suspect.rate = rate.rate;
    suspect.rate_low = rate.low;
    suspect.rate_high = rate.high;
    suspect.likelihood_ratio = rate.evidence;
    suspect.explains.assign(rate.explains.begin(), rate.explains.end());
    suspect.failing.assign(chosen.failing.begin(), chosen.failing.end());
    suspect.passing.assign(chosen.passing.begin(), chosen.passing.end());
    suspect.votes = static_cast<double>(rate.explains.size());
    suspect.probes = chosen.probes;
    std::set<std::string> faults;
    for (const std::size_t f : suspect.explains)
      faults.insert(out_.flows[f].faults.begin(), out_.flows[f].faults.end());
    suspect.faults.assign(faults.begin(), faults.end());
    for (std::size_t g = 1; g < group.size(); ++g) {
      const LinkData& twin = links_.at(group[g]);
      if (tie) {
        suspect.tied.push_back(twin.named.name);
      } else if (!moved_decides && !counters_decide && twin.probes.starts_here()) {
        suspect.lossier_past_it.push_back(fmt::format("{} ({})", twin.named.name, probe_text(twin.probes)));
      } else {
        suspect.cleared.push_back(twin.named.name);
      }
    }
    // One flow is a pattern when it counted enough events that chance does not make them.
    constexpr double kEventsOfOneFlow = 10;
    const bool one_flow = suspect.explains.size() < 2 && (kind == FaultKind::Failure || rate.events < kEventsOfOneFlow);
    const bool every_flow_met_it = rate.explains.size() == rate.flows.size();
    if (one_flow || tie) {
      suspect.confidence = Confidence::Low;
    } else if (every_flow_met_it && suspect.explains.size() >= 2) {
      suspect.confidence = Confidence::High;
    } else {
      suspect.confidence = Confidence::Medium;
    }
    std::string evidence =
        kind == FaultKind::Failure
            ? fmt::format("{} of {} flows through it fail ({}) and no other link explains them; {}",
                          suspect.explains.size(), rate.flows.size(), fmt::join(suspect.faults, ", "),
                          probe_text(chosen.probes))
            : fmt::format("{} crossing it ({}), {} ({}); {}", what_it_does(rate, kind), interval_text(rate, kind),
                          explained_text(rate), fmt::join(suspect.faults, ", "), probe_text(chosen.probes));
    if (cable_moved(winner)) {
      evidence += fmt::format(
          "; {} probes over this cable found another path for a while (it went down and "
          "routes moved away)",
          moved_over(winner));
    }
    if (const CountedDirection* counted = counted_on(winner)) {
      suspect.counted = *counted;
      suspect.confirmed_by_counters = counts_loss(winner);
      evidence += counter_text(*counted, suspect.confirmed_by_counters);
    }
    if (!suspect.cleared.empty()) {
      evidence += fmt::format("; the same flows cross {}, {}", fmt::join(suspect.cleared, " and "),
                              moved_decides     ? "over which no route moved"
                              : counters_decide ? "whose switches counted no loss"
                                                : "whose probes show no fault starting there");
    }
    if (!suspect.lossier_past_it.empty()) {
      evidence += fmt::format(
          "; past it the same flows cross {}, where probes go missing more still: a second fault "
          "there, or a router that answers fewer probes",
          fmt::join(suspect.lossier_past_it, " and "));
    }
    if (tie) {
      evidence += fmt::format("; the same flows cross {}, and neither flows nor probes tell them apart",
                              fmt::join(suspect.tied, " and "));
    }
    if (one_flow) evidence += "; only one failing flow crossed it";
    if (rate.held) {
      evidence +=
          "; judged with the other links' rates held, not refitted: so many flows failed that the fit ran out of "
          "its work budget";
    }
    suspect.evidence = std::move(evidence);
    suspect.next_steps = next_steps(suspect, chosen.named);
    return suspect;
  }

  static std::string counter_text(const CountedDirection& counted, bool confirmed) {
    if (!counted.receiver_read) {
      return fmt::format("; its sending switch port counted {} frames out, {} dropped there", counted.sent,
                         counted.out_errors + counted.out_discards);
    }
    const std::string counts = counted.counts_text();
    return confirmed ? fmt::format("; confirmed by the switch counters ({})", counts)
                     : fmt::format("; the switch counters saw no loss here ({})", counts);
  }

  // Named before unnamed; links that count frames by their rate, then those judged pass or fail
  // by the flows they explain.
  void rank_suspects() {
    const auto rank = [](const LinkSuspect& s) {
      return std::tuple{s.confidence == Confidence::Low, s.kind == FaultKind::Failure,
                        s.kind == FaultKind::Failure ? -static_cast<double>(s.explains.size()) : -s.rate};
    };
    std::stable_sort(out_.suspects.begin(), out_.suspects.end(),
                     [&](const LinkSuspect& a, const LinkSuspect& b) { return rank(a) < rank(b); });
  }

  void conclude() {
    std::vector<std::string> parts;
    if (const LinkSuspect* top = out_.top()) {
      parts.push_back(
          fmt::format("suspect link {} ({} confidence): {}", top->name, to_string(top->confidence), top->evidence));
      for (std::size_t i = 1; i < out_.suspects.size() && out_.suspects[i].confidence != Confidence::Low; ++i) {
        const LinkSuspect& also = out_.suspects[i];
        // Two formats, not " " + percent(): GCC 12 at -O3 warns (-Wrestrict, falsely) on that.
        parts.push_back(also.kind == FaultKind::Failure
                            ? fmt::format("also suspect link {} ({} confidence, {})", also.name,
                                          to_string(also.confidence), to_string(also.kind))
                            : fmt::format("also suspect link {} ({} confidence, {} {})", also.name,
                                          to_string(also.confidence), to_string(also.kind),
                                          units::format_percent(also.rate)));
      }
    } else if (!out_.suspects.empty()) {
      parts.push_back(
          fmt::format("no suspect link: the faults cannot be told apart ({})", out_.suspects.front().evidence));
    } else if (out_.hosts.empty()) {
      parts.push_back("no suspect link: the failing flows' links also carry passing flows");
    }
    for (const auto& host : out_.hosts)
      parts.push_back(fmt::format("host problem at {}: {}", host.agent, host.problem));
    if (untraced_ > 0) {
      parts.push_back(fmt::format("{} failing flow{} had no path trace (trace_rate 0, or no hop answered)", untraced_,
                                  untraced_ == 1 ? "" : "s"));
    }
    out_.conclusion = fmt::format("{}", fmt::join(parts, "; "));
  }

  const std::vector<StreamVerdict>& streams_;
  const FabricTopology* topology_;
  const SwitchCounterEvidence* counters_;
  Localisation out_;
  std::map<std::string, LinkData> links_;
  std::vector<std::pair<const std::string*, LinkData*>> link_by_index_;
  std::vector<std::vector<LinkData*>> links_of_flow_;
  std::vector<std::array<std::optional<FlowEvents>, 3>> evidence_;                 // per flow, by FaultKind
  std::size_t untraced_ = 0;                                                       // failing flows with no traced path
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> moved_by_cable_;  // moved, probes
};

}  // namespace

Localisation localise(const std::vector<StreamVerdict>& streams, const FabricTopology* topology,
                      const SwitchCounterEvidence* counters) {
  return Localiser(streams, topology, counters).run();
}

}  // namespace tusk
