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
  std::vector<FlowEvents> observed_flows(table_.size());
  bool any_events = false;
  for (std::size_t f = 0; f < table_.size(); ++f) {
    auto events = observed(f, kind);
    if (!events) continue;
    any_events = any_events || events->events > 0;
    observed_flows[f] = std::move(*events);
  }
  if (!any_events) return;
  std::vector<CleanFlows> clean(table_.link_count());
  for (std::uint32_t link = 0; link < table_.link_count(); ++link) {
    clean[link] = table_.link(link).clean[static_cast<std::size_t>(kind)];
  }
  const std::map<std::uint32_t, WindowMarks> in_time = fit_windows(kind);
  std::set<std::uint32_t> judged;     // links the whole test's fit named or found noise
  std::set<std::uint32_t> explained;  // the failing flows of what it named
  for (LinkRate& rate : estimate_link_rates(observed_flows, fitted_link_count(), clean)) {
    std::erase_if(rate.explains, [&](std::uint32_t f) { return !table_[f].has(FlowRecord::kFailing); });
    if (rate.explains.empty()) continue;    // significant, but within what the test allows
    if (!keep_known_links(rate)) continue;  // past where the traces stopped: no link to name
    std::vector<std::uint32_t> group = rate.links;
    if (!under_floor(rate, kind) || marks_of(group, in_time))
      explained.insert(rate.explains.begin(), rate.explains.end());
    const TwinPlacement placed = order_twins(group, rate.explains.front());
    judged.insert(group.begin(), group.end());
    const WindowMarks* marks = marks_of(group, in_time);
    if (under_floor(rate, kind)) {
      if (marks) {
        name_in_time(group, *marks, kind);
      } else {
        add_noise(group, rate, kind);
      }
      continue;
    }
    // A host's own link tied with fabric links is no host's fault for certain: a suspect, tied.
    if (told_apart(group, placed) && name_host_end(group.front(), rate, kind)) {
      if (marks) add_windows(out_.hosts.back(), *marks);
      continue;
    }
    LinkSuspect suspect = suspect_of(group, rate, kind, placed);
    if (marks) add_windows(suspect, *marks);
    out_.suspects.push_back(std::move(suspect));
    suspect_link_.push_back(group.front());
  }
  // Found in windows and not by the whole test's fit at all: its events there are too few beside
  // the rest of the test's clean frames. Unless what the test named explains its failing flows
  // already: then it is that fault seen through a window's fewer counts (traces that policed
  // probes cut short part twins that the whole test ties, and a window's fit may pick either).
  for (const auto& [link, marks] : in_time) {
    if (judged.contains(link) || marks.explains.empty()) continue;
    if (std::includes(explained.begin(), explained.end(), marks.explains.begin(), marks.explains.end())) continue;
    judged.insert(marks.group.begin(), marks.group.end());
    name_in_time(marks.group, marks, kind);
  }
}

bool Localiser::under_floor(const LinkRate& rate, FaultKind kind, double confidence) const {
  const double floor = kind == FaultKind::Loss ? out_.floor.loss : kind == FaultKind::Damage ? out_.floor.damage : 0.0;
  return floor > 0 && !(rate_lower_bound(rate, confidence) > floor);
}

void Localiser::add_noise(const std::vector<std::uint32_t>& group, const LinkRate& rate, FaultKind kind) {
  NoiseLink noise;
  noise.key = key_of(group.front());
  noise.name = table_.link(group.front()).named.name;
  for (std::size_t k = 1; k < group.size(); ++k) noise.tied.push_back(key_of(group[k]));
  noise.kind = kind;
  noise.events = static_cast<std::uint64_t>(std::llround(rate.events));
  noise.rate = rate.rate;
  noise.rate_low = rate.low;
  noise.rate_high = rate.high;
  const auto at = std::find_if(out_.noise.begin(), out_.noise.end(),
                               [&](const NoiseLink& other) { return other.rate < noise.rate; });
  out_.noise.insert(at, std::move(noise));
}

std::string Localiser::noise_text() const {
  if (out_.noise.empty()) return "";
  std::array<std::uint64_t, 2> events{};  // lost, damaged
  std::set<std::string> links;
  for (const NoiseLink& noise : out_.noise) {
    events[noise.kind == FaultKind::Loss ? 0 : 1] += noise.events;
    links.insert(noise.name);
  }
  std::vector<std::string> what;
  if (events[0] > 0) what.push_back(fmt::format("{} lost frame{}", events[0], events[0] == 1 ? "" : "s"));
  if (events[1] > 0) what.push_back(fmt::format("{} damaged frame{}", events[1], events[1] == 1 ? "" : "s"));
  if (what.empty()) what.push_back("less than one frame in all");
  constexpr std::size_t kListed = 4;
  std::vector<std::string> names;
  for (const NoiseLink& noise : out_.noise) {
    if (names.size() == kListed) break;
    if (std::find(names.begin(), names.end(), noise.name) == names.end()) names.push_back(noise.name);
  }
  return fmt::format(
      "noise: {} on {} link{} under the noise floor (loss {:.2g}, damage {:.2g} of the frames "
      "crossing a link, at 99.9 % confidence): {}{}",
      fmt::join(what, " and "), links.size(), links.size() == 1 ? "" : "s", out_.floor.loss, out_.floor.damage,
      fmt::join(names, ", "),
      links.size() > names.size() ? fmt::format(" and {} more", links.size() - names.size()) : "");
}

// One link, one suspect: a link that damages frames also loses those whose headers it hit, and a
// link named twice reads as two faults. Named for the kind that makes its case (its confidence,
// the failing flows it explains, then the larger share of the frames), with the others beside
// it, the flows they explain added to its own.
void Localiser::fold_kinds_per_link() {
  std::map<std::uint32_t, std::vector<std::size_t>> by_link;  // suspects' indexes, in naming order
  for (std::size_t s = 0; s < suspect_link_.size(); ++s) by_link[suspect_link_[s]].push_back(s);
  if (by_link.size() == suspect_link_.size()) return;
  const auto case_of = [&](std::size_t s) {
    const LinkSuspect& suspect = out_.suspects[s];
    return std::tuple{suspect.confidence, suspect.explains.size(), suspect.rate};
  };
  std::vector<bool> folded(suspect_link_.size(), false);
  for (auto& [link, named] : by_link) {
    if (named.size() < 2) continue;
    std::stable_sort(named.begin(), named.end(), [&](std::size_t a, std::size_t b) { return case_of(a) > case_of(b); });
    LinkSuspect& kept = out_.suspects[named.front()];
    std::set<std::size_t> explains(kept.explains.begin(), kept.explains.end());
    std::set<std::string> faults(kept.faults.begin(), kept.faults.end());
    for (std::size_t k = 1; k < named.size(); ++k) {
      const LinkSuspect& other = out_.suspects[named[k]];
      kept.also.push_back(
          {other.kind, other.rate, other.rate_low, other.rate_high, other.explains.size(), other.confidence});
      explains.insert(other.explains.begin(), other.explains.end());
      faults.insert(other.faults.begin(), other.faults.end());
      kept.evidence += other.kind == FaultKind::Failure
                           ? fmt::format("; {} flow{} through it judged pass or fail only failed too",
                                         other.explains.size(), other.explains.size() == 1 ? "" : "s")
                           : fmt::format("; it also {} (95 % interval {} to {}), which explains {} failing flow{}",
                                         what_it_does(other.rate, other.kind), units::format_percent(other.rate_low),
                                         units::format_percent(other.rate_high), other.explains.size(),
                                         other.explains.size() == 1 ? "" : "s");
      folded[named[k]] = true;
    }
    kept.explains.assign(explains.begin(), explains.end());
    kept.votes = static_cast<double>(kept.explains.size());
    kept.faults.assign(faults.begin(), faults.end());
  }
  std::size_t at = 0;
  for (std::size_t s = 0; s < suspect_link_.size(); ++s) {
    if (folded[s]) continue;
    if (at != s) {
      out_.suspects[at] = std::move(out_.suspects[s]);
      suspect_link_[at] = suspect_link_[s];
    }
    ++at;
  }
  out_.suspects.resize(at);
  suspect_link_.resize(at);
}

// A link where every flow through it starts (or ends) at one host is that host's own link:
// its NIC, optic or cable, named at the host.
bool Localiser::name_host_end(std::uint32_t link, const LinkRate& rate, FaultKind kind) {
  const auto at = [&](bool receive) -> std::optional<std::uint32_t> {
    std::optional<std::uint32_t> agent;
    for (const std::uint32_t f : rate.flows) {
      const FlowRecord& flow = table_[f];
      const auto links = table_.links_of(f);
      if (links.empty() || (receive ? links.back() : links.front()) != link) return std::nullopt;
      if (receive && !flow.has(FlowRecord::kReached)) return std::nullopt;
      const std::uint32_t end = receive ? flow.receiver : flow.sender;
      if (agent && *agent != end) return std::nullopt;
      agent = end;
    }
    // The clean flows summed at the link: every one of them starts (ends) there, at that one agent.
    const FlowLink& summed = table_.link(link);
    if (summed.clean_flows() > 0) {
      const std::uint64_t ending_here = receive ? summed.clean_last : summed.clean_first;
      const std::uint32_t end = receive ? summed.clean_receiver : summed.clean_sender;
      if (ending_here != summed.clean_flows() || end == FlowLink::kMixed || (agent && *agent != end)) {
        return std::nullopt;
      }
      agent = end;
    }
    return agent;
  };
  bool receive = false;
  std::optional<std::uint32_t> found = at(false);
  if (!found) {
    found = at(true);
    receive = true;
  }
  if (!found) return false;
  const std::string& agent = table_.agent(*found);
  const std::string& edge = table_.link(link).named.name;
  out_.hosts.push_back(
      {agent,
       receive ? "NIC, optic or cable (receive side)" : "NIC, optic or cable (transmit side)",
       fmt::format("{} on {} ({}), {}: the fault is where they {}, at {} or its link", what_it_does(rate.rate, kind),
                   edge, interval_text(rate, kind), explained_text(rate), receive ? "meet" : "start", agent),
       {fmt::format("Read {}'s NIC counters (ethtool -S: {}) and the switch port's {} counters{}.", agent,
                    receive ? "rx CRC errors, discards, FEC" : "tx errors, FEC", receive ? "transmit" : "receive",
                    receive ? "" : " (CRC, symbol errors)"),
        fmt::format("Reseat and clean the cable and optics of {}; swap the optic to see whether the fault follows it.",
                    edge)},
       std::nullopt});
  return true;
}

// The links the same flows cross, the likeliest first. The same flows cross them in one order:
// where damage starts on two of them, the first is where it starts for certain; past it, a second
// fault adds to it.
TwinPlacement Localiser::order_twins(std::vector<std::uint32_t>& group, std::size_t some_flow) const {
  const auto along = table_.links_of(some_flow);
  const auto position = [&](std::uint32_t link) { return std::find(along.begin(), along.end(), link) - along.begin(); };
  std::sort(group.begin(), group.end(), [&](std::uint32_t a, std::uint32_t b) { return position(a) < position(b); });
  TwinPlacement placed;
  if (group.size() > 1) placed = place_on_twins(table_.probe_hops(), router_of_link_, group);
  const std::vector<std::uint32_t> in_path_order = group;
  const auto likelihood = [&](std::uint32_t link) {
    const auto at =
        static_cast<std::size_t>(std::find(in_path_order.begin(), in_path_order.end(), link) - in_path_order.begin());
    return at < placed.score.size() ? placed.score[at] : -std::numeric_limits<double>::infinity();
  };
  std::stable_sort(group.begin(), group.end(), [&](std::uint32_t a, std::uint32_t b) {
    const std::string& key_a = key_of(a);
    const std::string& key_b = key_of(b);
    if (cable_moved(key_a) != cable_moved(key_b)) return cable_moved(key_a);
    // A switch counts every frame: where one end counted the loss and the other's counted
    // none, the counters decide, whatever the (policed) probes say.
    if (counts_loss(key_a) && counts_clean(key_b)) return true;
    if (counts_loss(key_b) && counts_clean(key_a)) return false;
    // Placed: the likeliest first. Not: in path order, the first where the fault could begin.
    return placed.decided && likelihood(a) > likelihood(b);
  });
  // The placement's scores are by twin in path order; the decision is about the one first now.
  if (placed.decided && group.front() != in_path_order[placed.best]) placed.decided = false;
  return placed;
}

// Every flow through each suspect's link, failing and passing: one pass over the flows.
void Localiser::list_suspects_flows() {
  std::vector<std::vector<std::size_t>> suspects_of_link(table_.link_count());
  for (std::size_t s = 0; s < suspect_link_.size(); ++s) suspects_of_link[suspect_link_[s]].push_back(s);
  for (std::size_t f = 0; f < table_.size(); ++f) {
    const FlowRecord& flow = table_[f];
    if (flow.has(FlowRecord::kHostSide)) continue;
    const auto links = table_.links_of(f);
    for (std::size_t k = 0; k < links.size(); ++k) {
      if (std::find(links.begin(), links.begin() + static_cast<long>(k), links[k]) !=
          links.begin() + static_cast<long>(k))
        continue;  // crossed twice, listed once
      for (const std::size_t s : suspects_of_link[links[k]]) {
        (flow.has(FlowRecord::kFailing) ? out_.suspects[s].failing : out_.suspects[s].passing).push_back(f);
      }
    }
  }
  for (std::size_t s = 0; s < suspect_link_.size(); ++s) {
    out_.suspects[s].passing_summed = table_.link(suspect_link_[s]).clean_flows();
  }
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
  } else if (out_.hosts.empty() && out_.noise.empty()) {
    parts.push_back("no suspect link: the failing flows' links also carry passing flows");
  } else if (out_.hosts.empty()) {
    parts.push_back("no suspect link");
  }
  out_.noise_text = noise_text();
  if (!out_.noise_text.empty()) parts.push_back(out_.noise_text);
  for (std::string& delay : delay_texts()) parts.push_back(std::move(delay));
  for (const auto& host : out_.hosts) parts.push_back(fmt::format("host problem at {}: {}", host.agent, host.problem));
  if (const std::size_t untraced = table_.untraced_failing(); untraced > 0) {
    parts.push_back(fmt::format("{} failing flow{} had no path trace (trace_rate 0, or no hop answered)", untraced,
                                untraced == 1 ? "" : "s"));
  }
  out_.conclusion = fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace tusk::localiser
