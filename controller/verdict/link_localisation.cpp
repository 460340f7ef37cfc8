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

Localiser::Localiser(std::shared_ptr<const FlowTable> flows, const FabricTopology* topology,
                     const SwitchCounterEvidence* counters, const NoiseFloor& floor, const FlowWindows* windows)
    : flows_(std::move(flows)), table_(*flows_), topology_(topology), counters_(counters), windows_(windows) {
  out_.flows = flows_;
  out_.floor = floor;
}

const std::string& Localiser::key_of(std::uint32_t link) const {
  return table_.link(link).named.key;
}

Localisation Localiser::run() {
  bool any_failing = false;
  for (std::size_t f = 0; f < table_.size() && !any_failing; ++f) any_failing = table_[f].has(FlowRecord::kFailing);
  name_delays();
  if (!any_failing) {
    const std::vector<std::string> delays = delay_texts();
    if (!delays.empty()) out_.conclusion = fmt::format("no flow failed; {}", fmt::join(delays, "; "));
    return std::move(out_);
  }
  name_slow_receivers();
  gather_links();
  count_moved_cables();
  for (const FaultKind kind : {FaultKind::Loss, FaultKind::Damage, FaultKind::Failure}) name_suspects(kind);
  fold_kinds_per_link();
  list_suspects_flows();
  rank_suspects();
  conclude();
  return std::move(out_);
}

// Receivers that dropped frames themselves: their flows' loss is theirs, not a link's.
void Localiser::name_slow_receivers() {
  std::map<std::string, FlowTable::ReceiverTally> by_name;  // in name order, as reports list them
  for (const auto& [agent, tally] : table_.receivers()) by_name[table_.agent(agent)] = tally;
  for (const auto& [agent, tally] : by_name) {
    if (tally.host_drops == 0) continue;
    out_.hosts.push_back({agent,
                          "receiver cannot keep up",
                          fmt::format("{} of its {} incoming flows lost frames that {} dropped itself (host drops: "
                                      "ring, socket or NIC buffers), not on a link",
                                      tally.host_drops, tally.flows, agent),
                          {fmt::format("Lower the rate, or give {}'s agent more cores (and its NIC more receive "
                                       "descriptors), then test again.",
                                       agent),
                           "Its loss says nothing about the links: no link is blamed for it."},
                          std::nullopt});
  }
}

// Link by link: what the flows' probes saw at it, a hop before it and a hop past it (the table's
// sums), then against its far end's other links.
void Localiser::gather_links() {
  links_.resize(table_.link_count());
  router_of_link_.resize(table_.link_count());
  std::unordered_map<std::string, std::uint32_t> router_ids;
  for (std::uint32_t id = 0; id < table_.link_count(); ++id) {
    links_[id].probes = table_.link(id).probes;
    links_[id].moved = table_.link(id).moved;
    const std::string& router = table_.link(id).far_end;
    const auto [it, added] = router_ids.try_emplace(router, static_cast<std::uint32_t>(routers_.size()));
    if (added) routers_.push_back(router);
    router_of_link_[id] = it->second;
  }
  // The unknown rest of the paths whose trace stopped past each link (fitted_links).
  tail_of_link_.assign(table_.link_count(), 0);
  std::vector<bool> tail_seen(table_.link_count(), false);
  for (std::size_t f = 0; f < table_.size(); ++f) {
    const FlowRecord& flow = table_[f];
    if (flow.has(FlowRecord::kReached) || flow.link_count == 0) continue;
    const std::uint32_t last = table_.links_of(f).back();
    if (!tail_seen[last]) {
      tail_seen[last] = true;
      tail_of_link_[last] = tails_++;
    }
  }
  compare_far_ends();
  for (LinkData& link : links_) finish_probe_evidence(link.probes);
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
  for (std::uint32_t id = 0; id < links_.size(); ++id) {
    const Answers mine = of(links_[id].probes);
    Answers& all = into[table_.link(id).far_end];
    all.probes += mine.probes;
    all.answers += mine.answers;
    all.probes_before += mine.probes_before;
    all.answers_before += mine.answers_before;
  }
  for (std::uint32_t id = 0; id < links_.size(); ++id) {
    ProbeEvidence& probes = links_[id].probes;
    const Answers mine = of(probes);
    const Answers& all = into.at(table_.link(id).far_end);
    probes.probes_elsewhere = all.probes - mine.probes;
    probes.answers_elsewhere = all.answers - mine.answers;
    probes.probes_elsewhere_before = all.probes_before - mine.probes_before;
    probes.answers_elsewhere_before = all.answers_before - mine.answers_before;
  }
}

// A cable that went down shows in both directions' flows: those over it die or move away. Where
// a router drops what it has no route for, probes to it die too, so the loss seems to start at
// the router, a hop before the cable that failed; the flows that moved name the cable itself.
void Localiser::count_moved_cables() {
  for (std::uint32_t id = 0; id < links_.size(); ++id) {
    auto& [moved, probes] = moved_by_cable_[cable_of(key_of(id))];
    moved += links_[id].moved;
    probes += links_[id].probes.probes;
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

std::optional<FlowEvents> Localiser::observed(std::size_t f, FaultKind kind) const {
  const FlowRecord& flow = table_[f];
  if (flow.has(FlowRecord::kHostSide) || flow.link_count == 0) return std::nullopt;
  const bool loss = flow.has(FlowRecord::kCountsLoss), damage = flow.has(FlowRecord::kCountsDamage);
  FlowEvents events;
  switch (kind) {
    case FaultKind::Loss:
      if (!loss) return std::nullopt;
      events.trials = flow.loss_trials;
      events.events = flow.loss_events;
      break;
    case FaultKind::Damage:
      if (!damage) return std::nullopt;
      events.trials = flow.damage_trials;
      events.events = flow.damage_events;
      break;
    case FaultKind::Failure:
      if ((loss && flow.loss_events > 0) || (damage && flow.damage_events > 0)) return std::nullopt;
      events.trials = 1;
      events.events = flow.has(FlowRecord::kFailing) ? 1 : 0;
      break;
  }
  events.links = fitted_links(f);
  return events;
}

std::vector<std::uint32_t> Localiser::fitted_links(std::size_t f) const {
  std::vector<std::uint32_t> links = distinct_links(f);
  const FlowRecord& flow = table_[f];
  if (!flow.has(FlowRecord::kReached) && flow.link_count > 0) {
    links.push_back(static_cast<std::uint32_t>(table_.link_count()) + tail_of_link_[table_.links_of(f).back()]);
  }
  return links;
}

bool Localiser::keep_known_links(LinkRate& rate) const {
  std::erase_if(rate.links, [&](std::uint32_t link) { return link >= table_.link_count(); });
  return !rate.links.empty();
}

// The distinct links flow f crossed (a path that loops crosses one twice).
std::vector<std::uint32_t> Localiser::distinct_links(std::size_t f) const {
  std::vector<std::uint32_t> links;
  for (const std::uint32_t link : table_.links_of(f)) {
    if (std::find(links.begin(), links.end(), link) == links.end()) links.push_back(link);
  }
  return links;
}

}  // namespace localiser

Localisation localise(std::shared_ptr<const FlowTable> flows, const FabricTopology* topology,
                      const SwitchCounterEvidence* counters, const NoiseFloor& floor, const FlowWindows* windows) {
  return localiser::Localiser(std::move(flows), topology, counters, floor, windows).run();
}

Localisation localise(const std::vector<StreamVerdict>& streams, const FabricTopology* topology,
                      const SwitchCounterEvidence* counters, const NoiseFloor& floor, const FlowWindows* windows) {
  auto flows = std::make_shared<FlowTable>();
  flows->add(streams, topology);
  return localise(std::move(flows), topology, counters, floor, windows);
}

}  // namespace tusk
