#include "controller/verdict/link_delays.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace tusk {
namespace {

constexpr double kZ95 = 1.959964;
constexpr double kZ999 = 3.090232;  // one-sided 99.9 %
constexpr int kMaxSweeps = 2000;

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

// One unknown: links crossed by the same flows, and those flows.
struct Unknown {
  std::vector<std::uint32_t> links;
  std::vector<std::uint32_t> flows;
  std::uint32_t siblings = 0;  // flows of the same host pairs not through it
};

// The unknowns a pair of flows can tell apart: a link some sibling of its flows does not cross.
std::vector<Unknown> unknowns_of(const std::vector<FlowDelay>& flows, std::size_t link_count,
                                 const std::vector<std::uint32_t>& pair_size) {
  std::vector<std::vector<std::uint32_t>> through(link_count);
  for (std::uint32_t f = 0; f < flows.size(); ++f) {
    if (pair_size[flows[f].siblings] < 2) continue;
    for (const std::uint32_t link : flows[f].links) {
      if (link < link_count) through[link].push_back(f);
    }
  }
  std::map<std::vector<std::uint32_t>, std::size_t> by_flows;
  std::vector<Unknown> unknowns;
  for (std::uint32_t link = 0; link < link_count; ++link) {
    auto& mine = through[link];
    if (mine.empty()) continue;
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    std::map<std::uint32_t, std::uint32_t> per_pair;
    for (const std::uint32_t f : mine) ++per_pair[flows[f].siblings];
    std::uint32_t others = 0;
    for (const auto& [pair, count] : per_pair) others += pair_size[pair] - count;
    if (others == 0) continue;  // every sibling crosses it: one with the bases
    const auto [at, added] = by_flows.try_emplace(mine, unknowns.size());
    if (added) unknowns.push_back({{}, mine, others});
    unknowns[at->second].links.push_back(link);
  }
  return unknowns;
}

// The least-squares fit over the pairs' bases and the active unknowns' delays, by coordinate
// descent: each step sets one base or delay to its best value given the rest.
class DelayModel {
 public:
  DelayModel(const std::vector<FlowDelay>& flows, const std::vector<Unknown>& unknowns,
             const std::vector<std::vector<std::uint32_t>>& pair_flows)
      : unknowns_(&unknowns),
        pair_flows_(&pair_flows),
        residual_(flows.size(), 0),
        added_(unknowns.size(), 0),
        active_(unknowns.size(), true) {
    for (std::uint32_t f = 0; f < flows.size(); ++f) {
      residual_[f] = flows[f].latency_ns;
      scale_ = std::max(scale_, flows[f].latency_ns);
    }
  }

  void fit() {
    for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
      double moved = 0;
      for (const auto& members : *pair_flows_) moved = std::max(moved, std::abs(shift(members, mean(members))));
      for (std::size_t u = 0; u < added_.size(); ++u) {
        if (!active_[u]) continue;
        const auto& members = (*unknowns_)[u].flows;
        const double best = std::max(0.0, added_[u] + mean(members));
        shift(members, best - added_[u]);
        moved = std::max(moved, std::abs(best - added_[u]));
        added_[u] = best;
      }
      if (moved <= 1e-9 * std::max(scale_, 1.0)) return;
    }
  }
  // Takes unknown `u` out of the model (its delay back into the residuals); refit() after.
  void drop(std::size_t u) {
    shift((*unknowns_)[u].flows, -added_[u]);
    added_[u] = 0;
    active_[u] = false;
  }
  double added(std::size_t u) const { return added_[u]; }
  double rss() const {
    double sum = 0;
    for (const auto& members : *pair_flows_) {
      for (const std::uint32_t f : members) sum += residual_[f] * residual_[f];
    }
    return sum;
  }
  std::vector<double> deviations() const {
    std::vector<double> out;
    for (const auto& members : *pair_flows_) {
      for (const std::uint32_t f : members) out.push_back(std::abs(residual_[f]));
    }
    return out;
  }

 private:
  double mean(const std::vector<std::uint32_t>& members) const {
    double sum = 0;
    for (const std::uint32_t f : members) sum += residual_[f];
    return members.empty() ? 0 : sum / static_cast<double>(members.size());
  }
  double shift(const std::vector<std::uint32_t>& members, double by) {
    for (const std::uint32_t f : members) residual_[f] -= by;
    return by;
  }

  const std::vector<Unknown>* unknowns_;
  const std::vector<std::vector<std::uint32_t>>* pair_flows_;
  std::vector<double> residual_;
  std::vector<double> added_;
  std::vector<bool> active_;
  double scale_ = 0;
};

}  // namespace

DelayFit estimate_link_delays(const std::vector<FlowDelay>& flows, std::size_t link_count, double min_added_ns) {
  DelayFit fit;
  std::vector<FlowDelay> usable;
  std::uint32_t pairs = 0;
  for (const auto& flow : flows) {
    if (!std::isfinite(flow.latency_ns) || flow.latency_ns < 0) continue;
    usable.push_back(flow);
    pairs = std::max(pairs, flow.siblings + 1);
  }
  std::vector<std::uint32_t> pair_size(pairs, 0);
  for (const auto& flow : usable) ++pair_size[flow.siblings];
  std::vector<Unknown> unknowns = unknowns_of(usable, link_count, pair_size);
  if (unknowns.empty()) return fit;
  std::vector<std::vector<std::uint32_t>> pair_flows(pairs);
  std::vector<double> latencies;
  for (std::uint32_t f = 0; f < usable.size(); ++f) {
    if (pair_size[usable[f].siblings] < 2) continue;
    pair_flows[usable[f].siblings].push_back(f);
    latencies.push_back(usable[f].latency_ns);
  }

  DelayModel model(usable, unknowns, pair_flows);
  model.fit();
  fit.noise_ns = std::max(1.4826 * median(model.deviations()), kLatencyResolution * median(latencies));
  // The fewest links that explain the latencies: a link's delay the others (and the bases) can
  // take over at no cost is not its own (a leaf's every uplink raised and its pairs' bases lowered
  // fit as well as no delay at all). Smallest first; each kept only when the fit without it is
  // worse by kMinDelayZ² of one flow's scatter.
  const double noise2 = fit.noise_ns * fit.noise_ns;
  const auto error_of = [&](const Unknown& unknown) {
    return fit.noise_ns *
           std::sqrt(1 / static_cast<double>(unknown.flows.size()) + 1 / static_cast<double>(unknown.siblings));
  };
  // What could never be named (not kMinDelayZ errors above zero, or not above the floor) is taken
  // out at once: a night's thousands of links are not tested one by one for their scatter.
  for (std::size_t u = 0; u < unknowns.size(); ++u) {
    if (model.added(u) < std::max(min_added_ns, kMinDelayZ * error_of(unknowns[u]))) model.drop(u);
  }
  model.fit();
  std::vector<std::size_t> order(unknowns.size());
  for (std::size_t u = 0; u < order.size(); ++u) order[u] = u;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return model.added(a) < model.added(b); });
  std::vector<double> evidence(unknowns.size(), 0);
  for (const std::size_t u : order) {
    if (model.added(u) <= 0) continue;
    const double with = model.rss();
    DelayModel without = model;
    without.drop(u);
    without.fit();
    evidence[u] = (without.rss() - with) / std::max(noise2, 1e-300);
    if (evidence[u] < kMinDelayZ * kMinDelayZ) model = std::move(without);
  }
  for (std::size_t u = 0; u < unknowns.size(); ++u) {
    const Unknown& unknown = unknowns[u];
    const double added = model.added(u);
    if (added <= 0 || evidence[u] < kMinDelayZ * kMinDelayZ) continue;
    const double error = error_of(unknown);
    if (added - kZ999 * error <= min_added_ns) continue;
    fit.delays.push_back({unknown.links, added, std::max(0.0, added - kZ95 * error), added + kZ95 * error,
                          std::sqrt(evidence[u]), static_cast<std::uint32_t>(unknown.flows.size()), unknown.siblings});
  }
  std::sort(fit.delays.begin(), fit.delays.end(),
            [](const LinkDelay& a, const LinkDelay& b) { return a.added_ns > b.added_ns; });
  return fit;
}

}  // namespace tusk
