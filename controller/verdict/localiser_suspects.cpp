// A localisation's suspects: the links' rates fitted per kind of fault, the links that explain a
// failing flow named (or the host whose own link it is), ranked, and the conclusion.
#include "controller/verdict/localiser.hpp"

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

namespace tusk::localiser {

// Fits the links' rates of `kind` and names those significantly above zero that explain a
// failing flow: a link, or a host when the link is where every flow through it starts or ends.
void Localiser::name_suspects(FaultKind kind) {
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
bool Localiser::name_host_end(const std::string& key, const LinkRate& rate, FaultKind kind) {
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
        fmt::format("Reseat and clean the cable and optics of {}; swap the optic to see whether the fault follows it.",
                    edge)}});
  return true;
}

// The links the same flows cross, the likeliest first. The same flows cross them in one order:
// where loss starts on two of them, the first is where it starts for certain; past it, a second
// fault or a router that answers fewer probes (ICMP rate limits, a busy control plane) both add
// loss, and neither is told apart.
void Localiser::order_twins(std::vector<std::string>& group) const {
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

// Named before unnamed; links that count frames by their rate, then those judged pass or fail
// by the flows they explain.
void Localiser::rank_suspects() {
  const auto rank = [](const LinkSuspect& s) {
    return std::tuple{s.confidence == Confidence::Low, s.kind == FaultKind::Failure,
                      s.kind == FaultKind::Failure ? -static_cast<double>(s.explains.size()) : -s.rate};
  };
  std::stable_sort(out_.suspects.begin(), out_.suspects.end(),
                   [&](const LinkSuspect& a, const LinkSuspect& b) { return rank(a) < rank(b); });
}

void Localiser::conclude() {
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
  for (const auto& host : out_.hosts) parts.push_back(fmt::format("host problem at {}: {}", host.agent, host.problem));
  if (untraced_ > 0) {
    parts.push_back(fmt::format("{} failing flow{} had no path trace (trace_rate 0, or no hop answered)", untraced_,
                                untraced_ == 1 ? "" : "s"));
  }
  out_.conclusion = fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace tusk::localiser
