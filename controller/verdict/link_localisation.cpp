#include "controller/verdict/link_localisation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/wire_bounds.hpp"
#include "controller/verdict/link_evidence.hpp"
#include "controller/verdict/path_faults.hpp"

namespace tusk {
namespace {

// Below this share of failing flows a link has too many passing ones to be the cause.
constexpr double kMinFailingShare = 0.5;

struct LinkData {
  NamedLink named;
  std::set<std::size_t> failing, passing;  // flows
  ProbeEvidence probes;
  std::set<std::string> faults;
  // Probes past this link that another address answered: the flows' path moved off the link for a
  // while (a route withdrawn when it went down).
  std::uint64_t moved = 0;
  // Its votes in kVoteUnit units: each unexplained failing flow through it gives kVoteUnit / (the
  // links on that flow's path).
  std::int64_t vote_units = 0;
};

// The least common multiple of 1..wire::kMaxPathHops: every flow's vote is an exact integer of these,
// so ranking links needs no tolerance and a vote can be taken back exactly.
constexpr std::int64_t kVoteUnit = 27720;
static_assert(wire::kMaxPathHops <= 12, "kVoteUnit must be divisible by every path length");

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

// One localisation, step by step: the flows and their traced paths, the faults at a host, the
// links the traced flows cross, and the suspects, named one at a time (the link with the most
// votes of flows still unexplained) until every failing flow is explained.
class Localiser {
 public:
  Localiser(const std::vector<StreamVerdict>& streams, const FabricTopology* topology)
      : streams_(streams), topology_(topology) {}

  Localisation run() {
    gather_flows();
    if (std::none_of(out_.flows.begin(), out_.flows.end(), [](const auto& f) { return f.failing; }))
      return std::move(out_);
    name_host_faults();
    gather_links();
    count_moved_cables();
    explain_failing_flows();
    conclude();
    return std::move(out_);
  }

 private:
  // Best first in a std::set: most votes, then the largest share of failing flows, then the
  // strongest probe evidence, then by name.
  using Rank = std::tuple<std::int64_t, double, double, std::string_view>;

  // One flow per 5-tuple, whatever judges it: the receiver's stream (DPDK), or both ends of a QP
  // (RDMA: the sender's flow and the receiver's sink); each with its traced path and named links.
  void gather_flows() {
    std::map<std::string, std::size_t> flow_of_key;
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

  // Every flow of the host fails, and they share no link but the host's own: were they all
  // through one fabric link (a re-test of the flows through a suspect), that link explains them.
  bool every_path_fails(const std::vector<std::size_t>& flows, bool receiving) const {
    if (flows.size() < 2) return false;
    std::optional<std::set<std::string>> shared;
    for (const std::size_t f : flows) {
      const auto& flow = out_.flows[f];
      if (!flow.failing || flow.host_side) return false;
      std::set<std::string> links(flow.links.begin(), flow.links.end());
      if (!flow.links.empty()) links.erase(receiving ? flow.links.back() : flow.links.front());
      if (!shared) {
        shared = std::move(links);
      } else {
        std::erase_if(*shared, [&](const std::string& link) { return !links.contains(link); });
      }
    }
    return shared && shared->empty();
  }

  std::string edge_name(const std::string& a, const std::string& b) const { return link_between(topology_, a, b).name; }

  // Host-side faults first: their flows vote for no link.
  void name_host_faults() {
    std::map<std::string, std::vector<std::size_t>> into, from;
    for (std::size_t f = 0; f < out_.flows.size(); ++f) {
      into[out_.flows[f].receiver].push_back(f);
      from[out_.flows[f].sender].push_back(f);
    }
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
    for (const auto& [agent, flows] : into) name_host_end(agent, flows, true);
    for (const auto& [agent, flows] : from) name_host_end(agent, flows, false);
  }

  // Every flow into (or from) `agent` fails, over paths that differ: the fault is where they meet
  // (or start), at the host or its own link.
  void name_host_end(const std::string& agent, const std::vector<std::size_t>& flows, bool receive) {
    if (!every_path_fails(flows, receive)) return;
    const TracedFlowPath& first = out_.flows[flows.front()];
    const auto& nodes = first.nodes;
    std::string edge = "its link to the switch";
    if (receive && nodes.size() >= 2 && first.reached) edge = edge_name(nodes[nodes.size() - 2], nodes.back());
    if (!receive && nodes.size() >= 2) edge = edge_name(nodes[0], nodes[1]);
    out_.hosts.push_back(
        {agent,
         receive ? "NIC, optic or cable (receive side)" : "NIC, optic or cable (transmit side)",
         fmt::format("all {} flows {} {} fail, over {} different paths: the fault is where they {}, at {} or its "
                     "link ({})",
                     flows.size(), receive ? "into" : "from", agent, flows.size(), receive ? "meet" : "start", agent,
                     edge),
         {fmt::format("Read {}'s NIC counters (ethtool -S: {}) and the switch port's {} counters{}.", agent,
                      receive ? "rx CRC errors, discards, FEC" : "tx errors, FEC", receive ? "transmit" : "receive",
                      receive ? "" : " (CRC, symbol errors)"),
          fmt::format(
              "Reseat and clean the cable and optics of {}; swap the optic to see whether the fault follows it.",
              edge)}});
    at_host_.insert(flows.begin(), flows.end());
  }

  // Votes and exoneration, link by link: which flows cross each link, and what their probes saw
  // at it and a hop before it.
  void gather_links() {
    links_of_flow_.resize(out_.flows.size());
    for (std::size_t f = 0; f < out_.flows.size(); ++f) {
      const TracedFlowPath& flow = out_.flows[f];
      if (flow.host_side || at_host_.contains(f)) continue;
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
    for (auto& [key, link] : links_) finish_probe_evidence(link.probes);
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

  bool cable_moved(const std::string& key) const {
    const auto it = moved_by_cable_.find(cable_of(key));
    if (it == moved_by_cable_.end()) return false;
    const auto& [moved, probes] = it->second;
    return moved >= 5 && static_cast<double>(moved) >= 0.005 * static_cast<double>(probes);
  }

  static double share(const LinkData& l) {
    return static_cast<double>(l.failing.size()) / static_cast<double>(l.failing.size() + l.passing.size());
  }

  static double strength(const LinkData& l) {
    const double z = std::max(l.probes.loss_z, l.probes.damage_z);
    return std::isnan(z) ? -std::numeric_limits<double>::infinity() : z;
  }

  std::int64_t vote_of(std::size_t f) const {
    return kVoteUnit / static_cast<std::int64_t>(out_.flows[f].nodes.size() - 1);
  }

  static Rank rank_of(const std::string& key, const LinkData& l) {
    return Rank{-l.vote_units, -share(l), -strength(l), key};
  }

  // Every failing flow with a traced path and no host to blame votes for the links it crosses.
  // Votes only fall as flows are explained, so a link is taken out of the candidates and put back
  // when they do: each round costs log n, not a sort of every link.
  void explain_failing_flows() {
    for (std::size_t f = 0; f < out_.flows.size(); ++f) {
      const auto& flow = out_.flows[f];
      if (flow.failing && !flow.host_side && !at_host_.contains(f) && flow.nodes.size() >= 2) unexplained_.insert(f);
    }
    for (const std::size_t f : unexplained_) {
      for (LinkData* link : links_of_flow_[f]) link->vote_units += vote_of(f);
    }
    for (const auto& [key, link] : links_) {
      key_of_[&link] = &key;
      if (share(link) >= kMinFailingShare && link.vote_units > 0) candidates_.insert(rank_of(key, link));
    }
    // Links crossed by exactly the same flows cannot be told apart by the flows: grouped once, by
    // their failing and passing flows.
    for (const auto& [key, link] : links_) {
      if (share(link) >= kMinFailingShare) same_flows_[{link.failing, link.passing}].push_back(key);
    }
    while (!unexplained_.empty() && !candidates_.empty()) {
      const LinkData& best = links_.at(std::string(std::get<3>(*candidates_.begin())));
      const std::vector<std::string> group = group_of(best);
      const LinkData& chosen = links_.at(group.front());
      out_.suspects.push_back(suspect_of(group));
      for (const auto& key : group) {
        used_.insert(key);
        candidates_.erase(rank_of(key, links_.at(key)));
      }
      take_back_votes(chosen);
    }
  }

  // The links the same flows cross as `best`, still unnamed, the likeliest first. The same flows
  // cross them in one order: where loss starts on two of them, the first is where it starts for
  // certain; past it, a second fault or a router that answers fewer probes (ICMP rate limits, a
  // busy control plane) both add loss, and neither is told apart.
  std::vector<std::string> group_of(const LinkData& best) const {
    std::vector<std::string> group;
    for (const auto& key : same_flows_.at({best.failing, best.passing})) {
      if (!used_.contains(key) && links_.at(key).vote_units > 0) group.push_back(key);
    }
    const auto& along = out_.flows[*best.failing.begin()].links;
    const auto position = [&](const std::string& key) {
      return std::find(along.begin(), along.end(), key) - along.begin();
    };
    std::sort(group.begin(), group.end(), [&](const std::string& a, const std::string& b) {
      const LinkData& la = links_.at(a);
      const LinkData& lb = links_.at(b);
      if (cable_moved(a) != cable_moved(b)) return cable_moved(a);
      const bool starts_a = la.probes.starts_here(), starts_b = lb.probes.starts_here();
      if (starts_a != starts_b) return starts_a;
      if (starts_a && position(a) != position(b)) return position(a) < position(b);
      if (strength(la) != strength(lb)) return strength(la) > strength(lb);
      return rank_of(a, la) < rank_of(b, lb);
    });
    return group;
  }

  // The suspect the group's first link is, with what tells it from the others and why.
  LinkSuspect suspect_of(const std::vector<std::string>& group) const {
    const std::string& winner = group.front();
    const LinkData& chosen = links_.at(winner);
    const bool moved_decides = group.size() > 1 && cable_moved(winner) && !cable_moved(group[1]);
    const bool probes_decide = moved_decides || (group.size() > 1 && chosen.probes.starts_here());
    const bool tie = group.size() > 1 && !probes_decide;

    LinkSuspect suspect;
    suspect.key = winner;
    suspect.name = chosen.named.name;
    suspect.failing.assign(chosen.failing.begin(), chosen.failing.end());
    suspect.passing.assign(chosen.passing.begin(), chosen.passing.end());
    suspect.votes = static_cast<double>(chosen.vote_units) / static_cast<double>(kVoteUnit);
    suspect.probes = chosen.probes;
    suspect.faults.assign(chosen.faults.begin(), chosen.faults.end());
    for (std::size_t g = 1; g < group.size(); ++g) {
      const LinkData& twin = links_.at(group[g]);
      if (tie) {
        suspect.tied.push_back(twin.named.name);
      } else if (!moved_decides && twin.probes.starts_here()) {
        suspect.lossier_past_it.push_back(fmt::format("{} ({})", twin.named.name, probe_text(twin.probes)));
      } else {
        suspect.cleared.push_back(twin.named.name);
      }
    }
    if (chosen.failing.size() < 2 || tie) {
      suspect.confidence = Confidence::Low;
    } else if (chosen.passing.empty()) {
      suspect.confidence = Confidence::High;
    } else {
      suspect.confidence = Confidence::Medium;
    }
    std::string evidence = fmt::format("{} of {} flows through it fail ({}); {}", chosen.failing.size(),
                                       chosen.failing.size() + chosen.passing.size(), fmt::join(suspect.faults, ", "),
                                       probe_text(chosen.probes));
    if (cable_moved(winner)) {
      evidence += fmt::format(
          "; {} probes over this cable found another path for a while (it went down and "
          "routes moved away)",
          moved_over(winner));
    }
    if (!suspect.cleared.empty()) {
      evidence +=
          fmt::format("; the same flows cross {}, {}", fmt::join(suspect.cleared, " and "),
                      moved_decides ? "over which no route moved" : "whose probes show no fault starting there");
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
    if (chosen.failing.size() < 2) evidence += "; only one failing flow crossed it";
    suspect.evidence = std::move(evidence);
    suspect.next_steps = next_steps(suspect, chosen.named);
    return suspect;
  }

  // The flows `chosen` explains take their votes back from every link they cross.
  void take_back_votes(const LinkData& chosen) {
    const std::vector<std::size_t> explained(chosen.failing.begin(), chosen.failing.end());
    for (const std::size_t f : explained) {
      if (unexplained_.erase(f) == 0) continue;
      for (LinkData* link : links_of_flow_[f]) {
        const std::string& key = *key_of_.at(link);
        const bool listed = candidates_.erase(rank_of(key, *link)) > 0;
        link->vote_units -= vote_of(f);
        if (listed && link->vote_units > 0) candidates_.insert(rank_of(key, *link));
      }
    }
  }

  void conclude() {
    std::vector<std::string> parts;
    if (const LinkSuspect* top = out_.top()) {
      parts.push_back(
          fmt::format("suspect link {} ({} confidence): {}", top->name, to_string(top->confidence), top->evidence));
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
  Localisation out_;
  std::set<std::size_t> at_host_;  // failing flows a host-side fault explains
  std::map<std::string, LinkData> links_;
  std::vector<std::vector<LinkData*>> links_of_flow_;
  std::size_t untraced_ = 0;                                                       // failing flows with no traced path
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> moved_by_cable_;  // moved, probes
  std::set<std::size_t> unexplained_;
  std::set<Rank> candidates_;
  std::map<const LinkData*, const std::string*> key_of_;
  std::map<std::pair<std::set<std::size_t>, std::set<std::size_t>>, std::vector<std::string>> same_flows_;
  std::set<std::string> used_;
};

}  // namespace

Localisation localise(const std::vector<StreamVerdict>& streams, const FabricTopology* topology) {
  return Localiser(streams, topology).run();
}

}  // namespace tusk
