#include "controller/verdict/link_rates.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "controller/verdict/ber_bound.hpp"

namespace tusk {
namespace {

// EM stops when no rate moves by more than this share in one step, or after so many steps: a
// link whose rate falls to zero does so geometrically, and the likelihood it still holds then is
// far below kMinEvidence.
constexpr double kSettled = 1e-7;
constexpr int kMaxSteps = 3000;
// A refit without one link starts from the fit with it, a few steps from where it settles.
constexpr int kMaxRefitSteps = 500;
constexpr double kNegligibleEvents = 0.5;
// Each side of the 95 % interval.
constexpr double kIntervalSide = 0.975;

// The share of the trials that meet an event where the hazard is `hazard` (a link's, or the sum of
// a flow's links'): a frame passes a link of hazard h with probability e^-h, and so all of a
// flow's links with e^-(their sum).
double share_met(double hazard) {
  return -std::expm1(-hazard);
}

class RateFit {
 public:
  RateFit(const std::vector<FlowEvents>& flows, std::size_t link_count, const std::vector<CleanFlows>& clean,
          std::uint64_t budget)
      : flows_(flows), clean_(clean), budget_(budget) {
    group_links(link_count);
    for (std::uint32_t f = 0; f < flows_.size(); ++f) {
      if (flows_[f].events == 0 || flows_[f].trials == 0) continue;
      EventFlow flow{f, static_cast<double>(flows_[f].events), {}};
      for (const std::uint32_t link : flows_[f].links) {
        if (link < group_of_link_.size() && group_of_link_[link] != kNone) flow.groups.push_back(group_of_link_[link]);
      }
      std::sort(flow.groups.begin(), flow.groups.end());
      flow.groups.erase(std::unique(flow.groups.begin(), flow.groups.end()), flow.groups.end());
      if (!flow.groups.empty()) events_.push_back(std::move(flow));
    }
    event_flows_of_group_.resize(groups_.size());
    for (std::uint32_t e = 0; e < events_.size(); ++e) {
      for (const std::uint32_t g : events_[e].groups) event_flows_of_group_[g].push_back(e);
      step_work_ += 2 * events_[e].groups.size();
    }
    step_work_ = std::max<std::uint64_t>(step_work_, 1);
  }

  std::vector<LinkRate> run() {
    std::vector<double> rate(groups_.size(), 0.0);
    std::vector<bool> kept(groups_.size(), false);
    for (std::uint32_t g = 0; g < groups_.size(); ++g) {
      if (event_flows_of_group_[g].empty()) continue;
      double events = 0;
      for (const std::uint32_t e : event_flows_of_group_[g]) events += events_[e].events;
      rate[g] = events / groups_[g].trials;
      kept[g] = true;
    }
    fit(rate, kept, kMaxSteps, budget_ / 4);
    // A link the fit gives less than half an event is on its way to zero (EM takes it there
    // geometrically, never in a finite number of steps): cleared without a test of its own.
    const std::vector<double> sums = flow_sums(rate);
    for (std::uint32_t g = 0; g < groups_.size(); ++g) {
      if (kept[g] && attributed_events(g, rate, sums) < kNegligibleEvents) {
        kept[g] = false;
        rate[g] = 0;
      }
    }
    fit(rate, kept, kMaxSteps, budget_ / 2);
    std::vector<double> evidence(groups_.size(), 0.0);
    drop_what_the_others_explain(rate, kept, evidence);
    return results(rate, kept, evidence);
  }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  struct Group {
    std::vector<std::uint32_t> links, flows;
    std::uint64_t clean_flows = 0;
    double trials = 0;
  };
  struct EventFlow {
    std::uint32_t flow;
    double events;
    std::vector<std::uint32_t> groups;
  };

  // Links crossed by exactly the same flows are one group: one unknown. Clean flows given per link
  // are the same on two links when their count and signature are.
  void group_links(std::size_t link_count) {
    std::vector<std::vector<std::uint32_t>> flows_of_link(link_count);
    for (std::uint32_t f = 0; f < flows_.size(); ++f) {
      if (flows_[f].trials == 0) continue;
      for (const std::uint32_t link : flows_[f].links) {
        if (link < link_count && (flows_of_link[link].empty() || flows_of_link[link].back() != f))
          flows_of_link[link].push_back(f);
      }
    }
    const auto clean_of = [&](std::uint32_t link) {
      return link < clean_.size() && clean_[link].trials > 0 ? clean_[link] : CleanFlows{};
    };
    group_of_link_.assign(link_count, kNone);
    std::map<std::tuple<std::vector<std::uint32_t>, std::uint64_t, std::uint64_t>, std::uint32_t> group_of_flows;
    for (std::uint32_t link = 0; link < link_count; ++link) {
      const CleanFlows clean = clean_of(link);
      if (flows_of_link[link].empty() && clean.flows == 0) continue;
      const auto [it, added] = group_of_flows.emplace(std::tuple(flows_of_link[link], clean.flows, clean.signature),
                                                      static_cast<std::uint32_t>(groups_.size()));
      if (added) {
        Group group;
        group.flows = flows_of_link[link];
        group.clean_flows = clean.flows;
        group.trials = clean.trials;
        for (const std::uint32_t f : group.flows) group.trials += static_cast<double>(flows_[f].trials);
        groups_.push_back(std::move(group));
      }
      groups_[it->second].links.push_back(link);
      group_of_link_[link] = it->second;
    }
  }

  // Each flow with events: the sum of its links' rates.
  std::vector<double> flow_sums(const std::vector<double>& rate) const {
    std::vector<double> sums(events_.size(), 0.0);
    for (std::size_t e = 0; e < events_.size(); ++e) {
      for (const std::uint32_t g : events_[e].groups) sums[e] += rate[g];
    }
    return sums;
  }

  // The log likelihood, less what does not depend on the rates: -infinity when a flow's events
  // have no link left to explain them. A flow of n trials and e events with hazard s:
  // e ln(1 - e^-s) - (n - e) s, its -n s summed per link below.
  double log_likelihood(const std::vector<double>& rate) {
    work_ += step_work_ / 2;
    const std::vector<double> sums = flow_sums(rate);
    double ll = 0;
    for (std::size_t e = 0; e < events_.size(); ++e) {
      if (sums[e] <= 0) return -std::numeric_limits<double>::infinity();
      ll += events_[e].events * (std::log(share_met(sums[e])) + sums[e]);
    }
    for (std::size_t g = 0; g < groups_.size(); ++g) ll -= rate[g] * groups_[g].trials;
    return ll;
  }

  // EM over the kept groups, each link's hazard the mean number of faults a frame meets on it (a
  // frame counted once however many it met): each hazard times (its flows' events over their
  // expected events), the expectation spread over the links of each flow in proportion to their
  // hazards.
  // Stops when the work done reaches `budget`.
  void fit(std::vector<double>& rate, const std::vector<bool>& kept, int steps, std::uint64_t budget) {
    // Accelerated (SQUAREM, Varadhan and Roland 2008): two EM steps give a direction and its
    // curvature, and a longer step along them is taken where the likelihood does not fall. EM alone
    // crawls along a ridge of near-equal explanations (a host's cable against the uplinks its flows
    // cross), and what it leaves short of the top grows with the events: at 10^7 frames a flow a
    // few hundred steps leave more than kMinEvidence, and the uplinks are named for the cable.
    for (int step = 0; step < steps && work_ + step_work_ <= budget;) {
      std::vector<double> once = rate;
      const double largest_move = em_step(once, kept);
      ++step;
      if (largest_move < kSettled) {
        rate = std::move(once);
        return;
      }
      if (step + 2 > steps || work_ + 3 * step_work_ > budget) {  // no room for a longer step: EM's own
        rate = std::move(once);
        continue;
      }
      step += 2;
      std::vector<double> twice = once;
      em_step(twice, kept);
      double moved = 0, curved = 0;
      for (std::uint32_t g = 0; g < groups_.size(); ++g) {
        const double r = once[g] - rate[g], v = twice[g] - 2 * once[g] + rate[g];
        moved += r * r;
        curved += v * v;
      }
      if (!(curved > 0)) {
        rate = std::move(twice);
        continue;
      }
      const double alpha = std::min(-1.0, -std::sqrt(moved / curved));
      std::vector<double> jump = rate;
      for (std::uint32_t g = 0; g < groups_.size(); ++g) {
        if (!kept[g] || rate[g] <= 0) continue;
        const double r = once[g] - rate[g], v = twice[g] - 2 * once[g] + rate[g];
        // Never to zero: EM's multiplicative steps could not bring a link back from there.
        jump[g] = std::max(rate[g] - 2 * alpha * r + alpha * alpha * v, twice[g] * 1e-3);
      }
      em_step(jump, kept);
      rate = log_likelihood(jump) >= log_likelihood(twice) ? std::move(jump) : std::move(twice);
    }
  }

  // One EM step over the kept groups; the largest share by which a rate moved.
  double em_step(std::vector<double>& rate, const std::vector<bool>& kept) {
    work_ += step_work_;
    const std::vector<double> sums = flow_sums(rate);
    double largest_move = 0;
    for (std::uint32_t g = 0; g < groups_.size(); ++g) {
      if (!kept[g] || rate[g] <= 0) continue;
      double share = 0;
      for (const std::uint32_t e : event_flows_of_group_[g]) {
        if (sums[e] > 0) share += events_[e].events / share_met(sums[e]);
      }
      const double next = rate[g] * share / groups_[g].trials;
      largest_move = std::max(largest_move, std::abs(next - rate[g]) / std::max(next, rate[g]));
      rate[g] = next;
    }
    return largest_move;
  }

  // The events of its flows the fit gives group g: each flow's, in proportion to g's share of its rate.
  double attributed_events(std::uint32_t g, const std::vector<double>& rate, const std::vector<double>& sums) const {
    double events = 0;
    for (const std::uint32_t e : event_flows_of_group_[g]) {
      if (sums[e] > 0) events += events_[e].events * rate[g] / sums[e];
    }
    return events;
  }

  // Each kept group is dropped and the rest refitted; it stays when the likelihood falls by
  // kMinEvidence or more. The group through the fewest trials goes first: of two explanations as
  // good, the one link through more flows stays (a host's cable rather than the two fabric links
  // its flows crossed). Until a whole pass drops nothing, so every kept group's evidence is
  // measured against the final fit.
  void drop_what_the_others_explain(std::vector<double>& rate, std::vector<bool>& kept, std::vector<double>& evidence) {
    std::vector<std::uint32_t> order;
    for (std::uint32_t g = 0; g < groups_.size(); ++g) {
      if (kept[g]) order.push_back(g);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return groups_[a].trials < groups_[b].trials; });
    double ll = log_likelihood(rate);
    for (bool dropped = true; dropped;) {
      dropped = false;
      for (const std::uint32_t g : order) {
        if (!kept[g]) continue;
        std::vector<double> without = rate;
        std::vector<bool> kept_without = kept;
        without[g] = 0;
        kept_without[g] = false;
        // Its events explained by nothing else: no refit can make up for it.
        const bool alone =
            std::any_of(event_flows_of_group_[g].begin(), event_flows_of_group_[g].end(), [&](std::uint32_t e) {
              return std::none_of(events_[e].groups.begin(), events_[e].groups.end(),
                                  [&](std::uint32_t h) { return h != g && kept[h]; });
            });
        if (alone) {
          evidence[g] = std::numeric_limits<double>::infinity();
          continue;
        }
        if (work_ + step_work_ * (kMaxRefitSteps + 1) > budget_) {
          judge_the_rest_held(rate, kept, evidence);
          return;
        }
        fit(without, kept_without, kMaxRefitSteps, budget_);
        const double ll_without = log_likelihood(without);
        evidence[g] = 2 * (ll - ll_without);
        if (evidence[g] < kMinEvidence) {
          rate = std::move(without);
          kept = std::move(kept_without);
          ll = ll_without;
          dropped = true;
        }
      }
    }
  }

  // Out of work: each kept group not yet tested is judged with every other rate held (what it
  // adds then is at least what it adds after a refit, so no link that a refit would keep goes).
  void judge_the_rest_held(std::vector<double>& rate, std::vector<bool>& kept, std::vector<double>& evidence) {
    const std::vector<double> sums = flow_sums(rate);
    for (std::uint32_t g = 0; g < groups_.size(); ++g) {
      if (!kept[g]) continue;
      if (evidence[g] == 0) held_.insert(g);
      double gain = -rate[g] * groups_[g].trials;
      for (const std::uint32_t e : event_flows_of_group_[g]) {
        const double without = sums[e] - rate[g];
        gain += without > 0 ? events_[e].events * (std::log(share_met(sums[e]) / share_met(without)) + rate[g])
                            : std::numeric_limits<double>::infinity();
      }
      if (held_.contains(g)) evidence[g] = 2 * gain;
      if (evidence[g] < kMinEvidence) {
        kept[g] = false;
        rate[g] = 0;
      }
    }
  }

  std::vector<LinkRate> results(const std::vector<double>& rate, const std::vector<bool>& kept,
                                const std::vector<double>& evidence) const {
    const std::vector<double> sums = flow_sums(rate);
    std::vector<LinkRate> out;
    for (std::uint32_t g = 0; g < groups_.size(); ++g) {
      if (!kept[g] || rate[g] <= 0) continue;
      LinkRate found;
      found.links = groups_[g].links;
      found.flows = groups_[g].flows;
      found.clean_flows = groups_[g].clean_flows;
      found.evidence = evidence[g];
      found.held = held_.contains(g);
      found.events = attributed_events(g, rate, sums);
      for (const std::uint32_t e : event_flows_of_group_[g]) {
        if (sums[e] > 0) found.explains.push_back(events_[e].flow);
      }
      // The faults the frames met on it (its hazard over its trials): its flows' events given it,
      // and those hidden where a frame met a second fault past it.
      found.met = static_cast<std::uint64_t>(std::llround(rate[g] * groups_[g].trials));
      found.trials = groups_[g].trials;
      set_rate_from_met(found);
      found.rate = share_met(rate[g]);  // the fit's own, unrounded
      out.push_back(std::move(found));
    }
    std::stable_sort(out.begin(), out.end(), [](const LinkRate& a, const LinkRate& b) { return a.rate > b.rate; });
    return out;
  }

  const std::vector<FlowEvents>& flows_;
  const std::vector<CleanFlows>& clean_;
  const std::uint64_t budget_;  // of work (kLinkRateWorkBudget): some 3 ns a unit, at random access
  std::vector<Group> groups_;
  std::vector<std::uint32_t> group_of_link_;
  std::vector<EventFlow> events_;
  std::vector<std::vector<std::uint32_t>> event_flows_of_group_;
  std::uint64_t step_work_ = 0;  // one EM step over every flow with events
  std::uint64_t work_ = 0;
  std::set<std::uint32_t> held_;  // groups judged with the other rates held, not refitted
};

}  // namespace

double rate_lower_bound(const LinkRate& rate, double confidence) {
  return rate.trials > 0 ? share_met(poisson_lower_limit(rate.met, confidence) / rate.trials) : 0.0;
}

void set_rate_from_met(LinkRate& rate) {
  if (rate.trials <= 0) return;
  rate.rate = share_met(static_cast<double>(rate.met) / rate.trials);
  rate.low = rate_lower_bound(rate, kIntervalSide);
  rate.high = share_met(poisson_upper_limit(rate.met, kIntervalSide) / rate.trials);
}

std::vector<LinkRate> estimate_link_rates(const std::vector<FlowEvents>& flows, std::size_t link_count,
                                          std::uint64_t work_budget) {
  static const std::vector<CleanFlows> kNoClean;
  return RateFit(flows, link_count, kNoClean, work_budget).run();
}

std::vector<LinkRate> estimate_link_rates(const std::vector<FlowEvents>& flows, std::size_t link_count,
                                          const std::vector<CleanFlows>& clean, std::uint64_t work_budget) {
  return RateFit(flows, link_count, clean, work_budget).run();
}

}  // namespace tusk
