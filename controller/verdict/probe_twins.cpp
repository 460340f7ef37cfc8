#include "controller/verdict/probe_twins.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace tusk {

namespace {

// Hazards past this make no probe come back: a link that loses all.
constexpr double kMaxHazard = 40;
constexpr int kRounds = 8;  // of answer shares, then the hazard, each given the other
constexpr int kHalvings = 50;
// A pair answers fully when it answers this share of its sender's full share (a healthy control
// plane drops the odd probe).
constexpr double kFullShare = 0.99;
// The least share of a path's answers that come back damaged: a damaged quote is rare enough that
// each one more than a hop before weighs against the damage being elsewhere.
constexpr double kHealthyDamage = 1e-6;
// A pair is judged policing, or counted in the fabric's median share, on this many probes at least.
constexpr double kMinProbesJudged = 100;
// Policing rules the answers when the fabric's other router-sender pairs answer, at the median,
// under this share of their sender's full share (a loss on a link the answers come back over takes
// a tenth or two; a token bucket per destination, most).
constexpr double kPolicedMedian = 0.5;

// The probes that asked one router-sender pair, with which twins each crossed.
struct Asked {
  std::uint64_t probes = 0, answers = 0;
  std::uint64_t crossed = 0;  // bit i: twins[i] is on its way
};
struct Pair {
  std::uint32_t router = 0, sender = 0;
  std::vector<Asked> asked;
  double answered = 1;              // its share, under the hypothesis being weighed
  double full = 1;                  // the sender's share where nothing polices: its best router outside the twins
  double cost = kPolicingEvidence;  // of a share under `full`: 0 where policing is no coincidence
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
// entering a twin damaged at its path's share before the twins, and the most likely share more
// where its path crossed that twin.
double damage_score(const std::vector<Entering>& entering, std::uint64_t twin_bit) {
  double excess = 0, room = 0;
  for (const Entering& e : entering) {
    if ((e.crossed & twin_bit) == 0) continue;
    excess += static_cast<double>(e.damaged) - static_cast<double>(e.answers) * e.before;
    room += static_cast<double>(e.answers) * (1 - e.before);
  }
  const double added = room > 0 ? std::clamp(excess / room, 0.0, 1.0) : 0;
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
// under the sender's full share only where it gains the pair's cost. `likelihood` is 2 × the log
// likelihood, `costs` the policers' costs.
struct Fit {
  double likelihood = 0, costs = 0;
};

Fit fit_shares(std::vector<Pair>& pairs, std::uint64_t twin_bit, double hazard) {
  Fit fit;
  for (Pair& pair : pairs) {
    double answers = 0, expected = 0;
    for (const Asked& a : pair.asked) {
      answers += static_cast<double>(a.answers);
      expected += static_cast<double>(a.probes) * kept(a, twin_bit, hazard);
    }
    // Between the sender's full share and all: no policer; under it, a policer.
    const double likeliest = expected > 0 ? std::min(1.0, answers / expected) : 1.0;
    const double unpoliced = std::max(likeliest, pair.full);
    const double full = 2 * pair_likelihood(pair, unpoliced, twin_bit, hazard);
    const double policed = 2 * pair_likelihood(pair, likeliest, twin_bit, hazard);
    const bool polices = policed - pair.cost > full;
    pair.answered = polices ? likeliest : unpoliced;
    fit.likelihood += polices ? policed : full;
    fit.costs += polices ? pair.cost : 0;
  }
  return fit;
}

// How far the answers scatter beyond a binomial's (Pearson's chi-square over its degrees of
// freedom, at least 1): a queue drops probes in bursts, not one by one, and a likelihood that took
// every probe as independent would be sure of what the bursts only suggest.
double dispersion(const std::vector<Pair>& pairs, std::uint64_t twin_bit, double hazard) {
  double chi_square = 0;
  std::size_t terms = 0;
  for (const Pair& pair : pairs) {
    for (const Asked& a : pair.asked) {
      const double p = std::clamp(pair.answered * kept(a, twin_bit, hazard), 1e-6, 1 - 1e-6);
      const auto n = static_cast<double>(a.probes);
      const double off = static_cast<double>(a.answers) - n * p;
      chi_square += off * off / (n * p * (1 - p));
      ++terms;
    }
  }
  const std::size_t fitted = pairs.size() + 1;
  return terms > fitted ? std::max(1.0, chi_square / static_cast<double>(terms - fitted)) : 1.0;
}

// A pair asked both by probes that crossed the twin and by probes that did not: those tell its
// share apart from the twin's hazard, which a pair asked only across the twin cannot.
bool asked_both_ways(const Pair& pair, std::uint64_t twin_bit) {
  bool across = false, around = false;
  for (const Asked& a : pair.asked) ((a.crossed & twin_bit) != 0 ? across : around) = true;
  return across && around;
}

// The twin's hazard that the probes crossing it fit best, the pairs' shares given: where the
// likelihood's slope in the hazard is 0 (it falls as the hazard grows: one root, halved to). Only
// the pairs asked both ways where there are any: elsewhere a share and the hazard trade freely.
double fit_hazard(const std::vector<Pair>& pairs, std::uint64_t twin_bit) {
  const bool any_both =
      std::any_of(pairs.begin(), pairs.end(), [&](const Pair& pair) { return asked_both_ways(pair, twin_bit); });
  const auto slope = [&](double hazard) {
    double sum = 0;
    for (const Pair& pair : pairs) {
      if (any_both && !asked_both_ways(pair, twin_bit)) continue;
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
  std::vector<double> others_shares;                   // each judged pair's answers over its sender's full share
  std::unordered_set<std::uint32_t> routers_policing;  // routers seen policing another sender
};

// A pair polices when it answered under kFullShare of its sender's full share, beyond chance.
bool polices(double probes, double answers, double full) {
  if (probes < kMinProbesJudged || answers >= kFullShare * full * probes) return false;
  Asked all{static_cast<std::uint64_t>(probes), static_cast<std::uint64_t>(answers), 0};
  return 2 * (log_likelihood(all, answers / probes) - log_likelihood(all, kFullShare * full)) >= kPolicingEvidence;
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
  std::unordered_map<std::uint64_t, std::pair<double, double>> asked;  // every pair's probes, answers
  for (std::size_t h = 0; h < hops.size(); ++h) {
    const ProbeHop& hop = hops[h];
    if (hop.probes == 0) continue;
    auto& [probes, answers] = asked[key(hop)];
    probes += static_cast<double>(hop.probes);
    answers += static_cast<double>(hop.answers);
    const auto found = pair_of.find(key(hop));
    if (found != pair_of.end()) asking.past_twins[found->second].asked.push_back({hop.probes, hop.answers, crossed[h]});
  }
  // A sender's full share: that of the router that answers it best, of those no twin is in the way
  // of. What a sender's own side loses (probes it could not send, answers it could not take) it
  // loses at every hop alike.
  std::unordered_map<std::uint32_t, double> full;
  for (const auto& [pair, counts] : asked) {
    if (pair_of.contains(pair) || counts.first < kMinProbesJudged) continue;
    double& best = full[static_cast<std::uint32_t>(pair)];
    best = std::max(best, counts.second / counts.first);
  }
  const auto full_of = [&](std::uint32_t sender) {
    const auto found = full.find(sender);
    return found == full.end() || found->second <= 0 ? 1.0 : std::min(1.0, found->second);
  };
  for (Pair& pair : asking.past_twins) pair.answered = pair.full = full_of(pair.sender);
  for (const auto& [pair, counts] : asked) {
    if (pair_of.contains(pair) || counts.first < kMinProbesJudged) continue;
    ++asking.others_judged;
    const double full_share = full_of(static_cast<std::uint32_t>(pair));
    asking.others_shares.push_back(counts.second / counts.first / full_share);
    if (!polices(counts.first, counts.second, full_share)) continue;
    ++asking.others_policing;
    asking.routers_policing.insert(static_cast<std::uint32_t>(pair >> 32));
  }
  return asking;
}

}  // namespace

TwinPlacement place_on_twins(const ProbeHops& hops, std::span<const std::uint32_t> router_of_link,
                             std::span<const std::uint32_t> twins) {
  twins = twins.first(std::min(twins.size(), kMaxTwinsPlaced));
  TwinPlacement placed;
  placed.score.assign(twins.size(), 0);
  Asking asking = pairs_asked(hops, router_of_link, twins);
  std::vector<Pair>& pairs = asking.past_twins;
  placed.any_probes = std::any_of(pairs.begin(), pairs.end(), [](const Pair& p) { return !p.asked.empty(); });
  if (!placed.any_probes || twins.size() < 2) return placed;
  // Where policing is common, the answers tell more of the policers than of the links: a token
  // bucket answers a sender's flows by when their probes come, not alike (in the RDMA VM lab one
  // leaf answered one QP's probes 1 % and its sibling's 14 %), so no share per router and sender
  // holds, and the probes place no loss; damage they still place (policing damages nothing).
  if (!asking.others_shares.empty()) {
    auto& shares = asking.others_shares;
    const auto middle = shares.begin() + static_cast<std::ptrdiff_t>(shares.size() / 2);
    std::nth_element(shares.begin(), middle, shares.end());
    placed.policing_common = *middle < kPolicedMedian;
  }
  // A router that polices another sender may police this one; one that answers every other
  // sender fully is unlikely to police this one alone.
  for (Pair& pair : pairs) pair.cost = asking.routers_policing.contains(pair.router) ? 0.0 : kPolicingEvidence;
  const std::vector<Entering> entering = hops_entering(hops, twins);
  std::vector<std::vector<ProbePolicer>> policers(twins.size());
  std::vector<Fit> fits(twins.size());
  std::vector<double> damage(twins.size());
  double scatter = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < twins.size(); ++i) {
    const std::uint64_t bit = std::uint64_t{1} << i;
    // A pair asked both ways starts at the share its probes around the twin show.
    for (Pair& pair : pairs) {
      double probes = 0, answers = 0;
      for (const Asked& a : pair.asked) {
        if ((a.crossed & bit) != 0) continue;
        probes += static_cast<double>(a.probes);
        answers += static_cast<double>(a.answers);
      }
      pair.answered = probes > 0 && answers > 0 ? std::min(1.0, answers / probes) : pair.full;
    }
    double h = 0;
    for (int round = 0; round < kRounds; ++round) {
      h = fit_hazard(pairs, bit);
      fits[i] = fit_shares(pairs, bit, h);
    }
    scatter = std::min(scatter, dispersion(pairs, bit, h));
    damage[i] = damage_score(entering, bit);
    for (const Pair& pair : pairs) {
      if (pair.answered < pair.full) policers[i].push_back({pair.router, pair.sender, pair.answered});
    }
  }
  // The answers scatter as much under the likeliest hypothesis: the likelihoods count for that
  // much less, the policers' costs as they are.
  for (std::size_t i = 0; i < twins.size(); ++i) {
    const double loss = placed.policing_common ? 0.0 : fits[i].likelihood / scatter - fits[i].costs;
    placed.score[i] = loss + damage[i];
  }
  placed.best =
      static_cast<std::size_t>(std::max_element(placed.score.begin(), placed.score.end()) - placed.score.begin());
  placed.decided = true;
  for (std::size_t i = 0; i < twins.size(); ++i) {
    if (i != placed.best && placed.score[i] > placed.score[placed.best] - kTwinEvidence) placed.decided = false;
  }
  if (!placed.policing_common) placed.policers = std::move(policers[placed.best]);
  placed.pairs_judged = asking.others_judged;
  placed.pairs_policing = asking.others_policing;
  return placed;
}

}  // namespace tusk
