// What a suspect's text says: what the link does, its rate's interval, the flows it explains,
// what tells it from the links the same flows cross, and what the switches counted.
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

std::string Localiser::what_it_does(double rate, FaultKind kind) {
  switch (kind) {
    case FaultKind::Loss:
      return fmt::format("loses {} of the frames", units::format_percent(rate));
    case FaultKind::Damage:
      return fmt::format("damages {} of the frames", units::format_percent(rate));
    case FaultKind::Failure:
      break;
  }
  return "fails the flows";
}

std::string Localiser::interval_text(const LinkRate& rate, FaultKind kind) {
  if (kind == FaultKind::Failure) return "judged pass or fail only";
  return fmt::format("95 % interval {} to {}", units::format_percent(rate.low), units::format_percent(rate.high));
}

std::string Localiser::explained_text(const LinkRate& rate) const {
  return fmt::format("which explains {} of the {} flows through it", rate.explains.size(), rate.all_flows());
}

bool Localiser::moved_decides_twins(const std::vector<std::uint32_t>& group) const {
  return group.size() > 1 && cable_moved(key_of(group[0])) && !cable_moved(key_of(group[1]));
}

bool Localiser::counters_decide_twins(const std::vector<std::uint32_t>& group) const {
  return group.size() > 1 && counts_loss(key_of(group[0])) && counts_clean(key_of(group[1]));
}

bool Localiser::told_apart(const std::vector<std::uint32_t>& group, const TwinPlacement& placed) const {
  if (group.size() < 2 || moved_decides_twins(group) || counters_decide_twins(group)) return true;
  return placed.decided;
}

std::string Localiser::policers_text(const std::vector<ProbePolicer>& policers) const {
  if (policers.empty()) return "";
  constexpr std::size_t kListed = 3;
  std::vector<std::string> said;
  for (const ProbePolicer& policer : policers) {
    if (said.size() == kListed) break;
    said.push_back(fmt::format("{} answered {} of {}'s probes", routers_[policer.router],
                               units::format_percent(policer.answered), table_.agent(policer.sender)));
  }
  return fmt::format(
      "; {}{} (ICMP policing or a busy control plane: the probes' fit allows for it, and it "
      "blames no link)",
      fmt::join(said, ", "),
      policers.size() > said.size() ? fmt::format(" and {} more", policers.size() - said.size()) : "");
}

// The suspect the group's first link is, with what tells it from the others and why.
LinkSuspect Localiser::suspect_of(const std::vector<std::uint32_t>& group, const LinkRate& rate, FaultKind kind,
                                  const TwinPlacement& placed) const {
  const std::string& winner = key_of(group.front());
  const LinkData& chosen = links_[group.front()];
  const NamedLink& named = table_.link(group.front()).named;
  const bool moved_decides = moved_decides_twins(group);
  const bool counters_decide = !moved_decides && counters_decide_twins(group);
  const bool tie = !told_apart(group, placed);

  LinkSuspect suspect;
  suspect.key = winner;
  suspect.name = named.name;
  suspect.kind = kind;
  suspect.rate = rate.rate;
  suspect.rate_low = rate.low;
  suspect.rate_high = rate.high;
  suspect.likelihood_ratio = rate.evidence;
  suspect.explains.assign(rate.explains.begin(), rate.explains.end());
  suspect.votes = static_cast<double>(rate.explains.size());
  suspect.probes = chosen.probes;
  std::set<std::string> faults;
  for (const std::size_t f : suspect.explains) {
    const auto& failed_on = table_.faults(table_[f].faults);
    faults.insert(failed_on.begin(), failed_on.end());
  }
  suspect.faults.assign(faults.begin(), faults.end());
  for (std::size_t g = 1; g < group.size(); ++g) {
    const LinkData& twin = links_[group[g]];
    const std::string& twin_name = table_.link(group[g]).named.name;
    if (tie) {
      suspect.tied.push_back(twin_name);
    } else if (!moved_decides && !counters_decide && twin.probes.damage_starts()) {
      suspect.lossier_past_it.push_back(fmt::format("{} ({})", twin_name, probe_text(twin.probes)));
    } else {
      suspect.cleared.push_back(twin_name);
    }
  }
  // One flow is a pattern when it counted enough events that chance does not make them.
  constexpr double kEventsOfOneFlow = 10;
  const bool one_flow = suspect.explains.size() < 2 && (kind == FaultKind::Failure || rate.events < kEventsOfOneFlow);
  const bool every_flow_met_it = rate.explains.size() == rate.all_flows();
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
                        suspect.explains.size(), rate.all_flows(), fmt::join(suspect.faults, ", "),
                        probe_text(chosen.probes))
          : fmt::format("{} crossing it ({}), {} ({}); {}", what_it_does(rate.rate, kind), interval_text(rate, kind),
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
  if (group.size() > 1 && !moved_decides && !counters_decide) {
    evidence += placed.policing_common
                    ? fmt::format(
                          "; {} of {} routers' answers to a sender are policed (ICMP policing), so the "
                          "probes place no loss",
                          placed.pairs_policing, placed.pairs_judged)
                    : policers_text(placed.policers);
  }
  if (!suspect.lossier_past_it.empty()) {
    evidence += fmt::format(
        "; the same flows also cross {}, where more probes come back damaged than a hop before: a "
        "second fault there",
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
  suspect.next_steps = next_steps(suspect, named);
  return suspect;
}

std::string Localiser::counter_text(const CountedDirection& counted, bool confirmed) {
  if (!counted.receiver_read) {
    return fmt::format("; its sending switch port counted {} frames out, {} dropped there", counted.sent,
                       counted.out_errors + counted.out_discards);
  }
  const std::string counts = counted.counts_text();
  return confirmed ? fmt::format("; confirmed by the switch counters ({})", counts)
                   : fmt::format("; the switch counters saw no loss here ({})", counts);
}

}  // namespace tusk::localiser
