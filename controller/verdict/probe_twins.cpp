#include "controller/verdict/probe_twins.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace tusk {

namespace {

// Hazards past this make no probe come back: a link that loses all.
constexpr double kMaxHazard = 40;
constexpr int kRounds = 8;  // of answer shares, then the hazard, each given the other
constexpr int kHalvings = 50;
// A pair answers fully when it answers this share of what asks it (a healthy control plane drops
// the odd probe), and is judged on this many probes at least.
constexpr double kFullShare = 0.99;
// The least share of a path's answers that come back damaged: a damaged quote is rare enough that
// each one more than a hop before weighs against the damage being elsewhere.
constexpr double kHealthyDamage = 1e-6;
constexpr double kMinProbesJudged = 100;
// Policing is common when one in this many of the fabric's other pairs police.
constexpr std::size_t kPolicingCommon = 4;

// The probes that asked one router-sender pair, with which twins each crossed.
struct Asked {
  std::uint64_t probes = 0, answers = 0;
  std::uint64_t crossed = 0;  // bit i: twins[i] is on its way
};
struct Pair {
  std::uint32_t router = 0, sender = 0;
  std::vector<Asked> asked;
  double answered = 1;  // its share, under the hypothesis being weighed
};

// The binomial log likelihood of `hits` of `trials`, each a hit with probability p.
double binomial(std::uint64_t trials, std::uint64_t hits, double p) {
  p = std::clamp(p, 1e-12, 1 - 1e-12);
  return static_cast<double>(hits) * std::log(p) + static_cast<double>(trials - hits) * std::log1p(-p);
}

double log_likelihood(const Asked& a, double p) {
  return binomial(a.probes, a.answers, p);
}

// The hops that enter a twin, each with the twins its path crossed before and the damaged share
// its path had before the first of them (at the nearest hop before any twin that answered):
// damage shows where it starts, whatever came before, and policing (which drops answers) damages
// none.
struct Entering {
  std::uint64_t crossed = 0;  // bit i: twins[i] is on its way, its own link included
  std::uint64_t answers = 0, damaged = 0;
  double before = 0;
};

std::vector<Entering> hops_entering(const ProbeHops& hops, std::span<const std::uint32_t> twins) {
  const auto bit_of = [&](std::uint32_t link) {
    const auto at = static_cast<std::size_t>(std::find(twins.begin(), twins.end(), link) - twins.begin());
    return at < twins.size() ? std::uint64_t{1} << at : std::uint64_t{0};
  };
  std::vector<Entering> entering;
  for (std::size_t h = 0; h < hops.size(); ++h) {
    const ProbeHop& hop = hops[h];
    Entering e{bit_of(hop.link), hop.answers, hop.damaged, 0};
    if (e.crossed == 0 || hop.answers == 0) continue;
    // Up the path: past every twin on it, the first hop that answered.
    std::vector<std::uint32_t> above;
    for (std::uint32_t up = hop.parent; up != ProbeHop::kFirst; up = hops[up].parent) {
      e.crossed |= bit_of(hops[up].link);
      above.push_back(up);
    }
    std::size_t first_twin = 0;  // into `above`, past the topmost twin's hop
    for (std::size_t k = 0; k < above.size(); ++k) {
      if (bit_of(hops[above[k]].link) != 0) first_twin = k + 1;
    }
    for (std::size_t k = first_twin; k < above.size(); ++k) {
      const ProbeHop& at = hops[above[k]];
      if (at.answers == 0) continue;
      e.before = static_cast<double>(at.damaged) / static_cast<double>(at.answers);
      break;
    }
    entering.push_back(e);
  }
  return entering;
}

// 2 × the log likelihood of the damaged answers with the damage on twin `twin_bit`: every hop
// entering a twin damaged at its path's share before the twins, and `share` more (given, or the
// most likely) where its path crossed that twin.
double damage_score(const std::vector<Entering>& entering, std::uint64_t twin_bit, std::optional<double> share) {
  double added = 0;
  if (share) {
    added = *share;
  } else {
    double excess = 0, room = 0;
    for (const Entering& e : entering) {
      if ((e.crossed & twin_bit) == 0) continue;
      excess += static_cast<double>(e.damaged) - static_cast<double>(e.answers) * e.before;
      room += static_cast<double>(e.answers) * (1 - e.before);
    }
    added = room > 0 ? std::clamp(excess / room, 0.0, 1.0) : 0;
  }
  double sum = 0;
  for (const Entering& e : entering) {
    const double base = std::max(e.before, kHealthyDamage);
    sum += binomial(e.answers, e.damaged, (e.crossed & twin_bit) != 0 ? 1 - (1 - base) * (1 - added) : base);
  }
  return 2 * sum;
}

double kept(const Asked& a, std::uint64_t twin_bit, double hazard) {
  return (a.crossed & twin_bit) != 0 ? std::exp(-hazard) : 1.0;
}

double pair_likelihood(const Pair& pair, double share, std::uint64_t twin_bit, double hazard) {
  double sum = 0;
  for (const Asked& a : pair.asked) sum += log_likelihood(a, share * kept(a, twin_bit, hazard));
  return sum;
}

// Each pair's share given the hazard: the most likely (answers over the answers expected), taken
// only where it gains `cost` over answering fully. Returns 2 × the log likelihood, less the
// policers' cost.
double fit_shares(std::vector<Pair>& pairs, std::uint64_t twin_bit, double hazard, double cost) {
  double score = 0;
  for (Pair& pair : pairs) {
    double answers = 0, expected = 0;
    for (const Asked& a : pair.asked) {
      answers += static_cast<double>(a.answers);
      expected += static_cast<double>(a.probes) * kept(a, twin_bit, hazard);
    }
    const double share = expected > 0 ? std::min(1.0, answers / expected) : 1.0;
    const double full = 2 * pair_likelihood(pair, 1.0, twin_bit, hazard);
    const double policed = 2 * pair_likelihood(pair, share, twin_bit, hazard) - cost;
    pair.answered = policed > full ? share : 1.0;
    score += std::max(full, policed);
  }
  return score;
}

// The twin's hazard that the probes crossing it fit best, the pairs' shares given: where the
// likelihood's slope in the hazard is 0 (it falls as the hazard grows: one root, halved to).
double fit_hazard(const std::vector<Pair>& pairs, std::uint64_t twin_bit) {
  const auto slope = [&](double hazard) {
    double sum = 0;
    for (const Pair& pair : pairs) {
      for (const Asked& a : pair.asked) {
        if ((a.crossed & twin_bit) == 0) continue;
        const double p = std::clamp(pair.answered * std::exp(-hazard), 1e-12, 1 - 1e-12);
        sum += -static_cast<double>(a.answers) + static_cast<double>(a.probes - a.answers) * p / (1 - p);
      }
    }
    return sum;
  };
  if (slope(0) <= 0) return 0;
  double low = 0, high = kMaxHazard;
  for (int i = 0; i < kHalvings; ++i) {
    const double mid = (low + high) / 2;
    (slope(mid) > 0 ? low : high) = mid;
  }
  return (low + high) / 2;
}

// The pairs whose probes crossed a twin, with every probe that asked them (those that came by
// another link tell what the router answers when no twin is in the way); and of the fabric's other
// pairs, how many were asked enough to tell and how many of those police.
struct Asking {
  std::vector<Pair> past_twins;
  std::size_t others_judged = 0, others_policing = 0;
};

// A pair polices when it answered under kFullShare of the probes that asked it, beyond chance.
bool polices(double probes, double answers) {
  if (probes < kMinProbesJudged || answers >= kFullShare * probes) return false;
  Asked all{static_cast<std::uint64_t>(probes), static_cast<std::uint64_t>(answers), 0};
  return 2 * (log_likelihood(all, answers / probes) - log_likelihood(all, kFullShare)) >= kPolicingEvidence;
}

Asking pairs_asked(const ProbeHops& hops, std::span<const std::uint32_t> router_of_link,
                   std::span<const std::uint32_t> twins) {
  Asking asking;
  std::vector<std::uint64_t> crossed(hops.size(), 0);
  std::unordered_map<std::uint64_t, std::size_t> pair_of;
  const auto key = [&](const ProbeHop& hop) { return std::uint64_t{router_of_link[hop.link]} << 32 | hop.sender; };
  for (std::size_t h = 0; h < hops.size(); ++h) {
    const ProbeHop& hop = hops[h];
    std::uint64_t mask = hop.parent == ProbeHop::kFirst ? 0 : crossed[hop.parent];
    for (std::size_t i = 0; i < twins.size(); ++i) mask |= twins[i] == hop.link ? std::uint64_t{1} << i : 0;
    crossed[h] = mask;
    if (mask != 0 && pair_of.try_emplace(key(hop), asking.past_twins.size()).second) {
      asking.past_twins.push_back(Pair{router_of_link[hop.link], hop.sender, {}, 1});
    }
  }
  std::unordered_map<std::uint64_t, std::pair<double, double>> others;  // probes, answers
  for (std::size_t h = 0; h < hops.size(); ++h) {
    const ProbeHop& hop = hops[h];
    if (hop.probes == 0) continue;
    const auto found = pair_of.find(key(hop));
    if (found != pair_of.end()) {
      asking.past_twins[found->second].asked.push_back({hop.probes, hop.answers, crossed[h]});
    } else {
      auto& [probes, answers] = others[key(hop)];
      probes += static_cast<double>(hop.probes);
      answers += static_cast<double>(hop.answers);
    }
  }
  for (const auto& [pair, counts] : others) {
    if (counts.first < kMinProbesJudged) continue;
    ++asking.others_judged;
    asking.others_policing += polices(counts.first, counts.second) ? 1 : 0;
  }
  return asking;
}

}  // namespace

TwinPlacement place_on_twins(const ProbeHops& hops, std::span<const std::uint32_t> router_of_link,
                             std::span<const std::uint32_t> twins, const TwinFault& fault) {
  twins = twins.first(std::min(twins.size(), kMaxTwinsPlaced));
  TwinPlacement placed;
  placed.score.assign(twins.size(), 0);
  Asking asking = pairs_asked(hops, router_of_link, twins);
  std::vector<Pair>& pairs = asking.past_twins;
  placed.any_probes = std::any_of(pairs.begin(), pairs.end(), [](const Pair& p) { return !p.asked.empty(); });
  if (!placed.any_probes || twins.size() < 2) return placed;
  // Where policing is common, a share under 1 is no coincidence to be paid for: only what no share
  // can explain (more answers than the hazard lets through) places the fault.
  placed.policing_common = asking.others_judged > 0 && asking.others_policing * kPolicingCommon >= asking.others_judged;
  const double cost = placed.policing_common ? 0.0 : kPolicingEvidence;
  const std::optional<double> given =
      fault.loss_hazard ? std::optional<double>(std::clamp(*fault.loss_hazard, 0.0, kMaxHazard)) : std::nullopt;
  const std::optional<double> damage =
      fault.damage_share ? std::optional<double>(std::clamp(*fault.damage_share, 0.0, 1.0)) : std::nullopt;
  const std::vector<Entering> entering = hops_entering(hops, twins);
  std::vector<std::vector<ProbePolicer>> policers(twins.size());
  for (std::size_t i = 0; i < twins.size(); ++i) {
    const std::uint64_t bit = std::uint64_t{1} << i;
    for (Pair& pair : pairs) pair.answered = 1;
    double h = given.value_or(fit_hazard(pairs, bit));
    double score = fit_shares(pairs, bit, h, cost);
    for (int round = 1; round < kRounds && !given; ++round) {
      h = fit_hazard(pairs, bit);
      score = fit_shares(pairs, bit, h, cost);
    }
    placed.score[i] = score + damage_score(entering, bit, damage);
    for (const Pair& pair : pairs) {
      if (pair.answered < 1) policers[i].push_back({pair.router, pair.sender, pair.answered});
    }
  }
  placed.best =
      static_cast<std::size_t>(std::max_element(placed.score.begin(), placed.score.end()) - placed.score.begin());
  placed.decided = true;
  for (std::size_t i = 0; i < twins.size(); ++i) {
    if (i != placed.best && placed.score[i] > placed.score[placed.best] - kTwinEvidence) placed.decided = false;
  }
  placed.policers = std::move(policers[placed.best]);
  return placed;
}

}  // namespace tusk
