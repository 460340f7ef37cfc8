#include "controller/verdict/link_delays.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace tusk {
namespace {

constexpr double kZ95 = 1.959964;
constexpr double kZ999 = 3.090232;  // one-sided 99.9 %
constexpr int kMaxSweeps = 2000;
// Candidates the forward step may try in a row that fail the test: past them, the rest (each
// explaining less) would too.
constexpr int kMaxRejectedInARow = 8;

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
  // Its column's spread once each pair's mean is taken out: sum over pairs of c(1 - c/n), c of
  // the pair's n flows through it. Its delay's standard error is the scatter over its root.
  double spread = 0;
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
    double spread = 0;
    for (const auto& [pair, count] : per_pair) {
      others += pair_size[pair] - count;
      spread += count * (1 - static_cast<double>(count) / pair_size[pair]);
    }
    if (others == 0) continue;  // every sibling crosses it: one with the bases
    const auto [at, added] = by_flows.try_emplace(mine, unknowns.size());
    if (added) unknowns.push_back({{}, mine, others, spread});
    unknowns[at->second].links.push_back(link);
  }
  return unknowns;
}

// The least-squares fit over the pairs' bases and the active unknowns' delays, by coordinate
// descent: each step sets one base or delay to its best value given the rest. Every flow visit
// is paid from a shared budget.
class DelayModel {
 public:
  DelayModel(const std::vector<FlowDelay>& flows, const std::vector<Unknown>& unknowns,
             const std::vector<std::vector<std::uint32_t>>& pair_flows, std::uint64_t* work_left)
      : work_left_(work_left),
        unknowns_(&unknowns),
        pair_flows_(&pair_flows),
        residual_(flows.size(), 0),
        added_(unknowns.size(), 0) {
    for (std::uint32_t f = 0; f < flows.size(); ++f) {
      residual_[f] = flows[f].latency_ns;
      scale_ = std::max(scale_, flows[f].latency_ns);
    }
  }

  // False when the work budget ran out first: the fit is then as far as it got.
  bool fit() {
    for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
      if (*work_left_ == 0) return false;
      double moved = 0;
      for (const auto& members : *pair_flows_) moved = std::max(moved, std::abs(shift(members, mean(members))));
      for (const std::size_t u : active_) {
        const auto& members = (*unknowns_)[u].flows;
        const double best = std::max(0.0, added_[u] + mean(members));
        shift(members, best - added_[u]);
        moved = std::max(moved, std::abs(best - added_[u]));
        added_[u] = best;
      }
      if (moved <= 1e-9 * std::max(scale_, 1.0)) return true;
    }
    return true;
  }
  void activate(std::size_t u) { active_.push_back(u); }
  // Takes unknown `u` out of the model (its delay back into the residuals); fit() after.
  void drop(std::size_t u) {
    shift((*unknowns_)[u].flows, -added_[u]);
    added_[u] = 0;
    active_.erase(std::remove(active_.begin(), active_.end(), u), active_.end());
  }
  const std::vector<std::size_t>& active() const { return active_; }
  double added(std::size_t u) const { return added_[u]; }
  // What `u`'s delay would be, alone beside the bases fitted: its flows' residuals over its spread.
  double alone(std::size_t u) {
    const auto& unknown = (*unknowns_)[u];
    return unknown.spread > 0 ? mean(unknown.flows) * static_cast<double>(unknown.flows.size()) / unknown.spread : 0;
  }
  double rss() const {
    double sum = 0;
    for (const auto& members : *pair_flows_) {
      for (const std::uint32_t f : members) sum += residual_[f] * residual_[f];
    }
    return sum;
  }
  // One flow's scatter about the model: the residuals' median absolute deviation, as a normal's
  // standard deviation.
  double scatter() const {
    std::vector<double> deviations;
    for (const auto& members : *pair_flows_) {
      for (const std::uint32_t f : members) deviations.push_back(std::abs(residual_[f]));
    }
    return 1.4826 * median(std::move(deviations));
  }
  void spend(std::size_t visits) { *work_left_ -= std::min<std::uint64_t>(*work_left_, visits); }

 private:
  double mean(const std::vector<std::uint32_t>& members) {
    spend(members.size());
    double sum = 0;
    for (const std::uint32_t f : members) sum += residual_[f];
    return members.empty() ? 0 : sum / static_cast<double>(members.size());
  }
  double shift(const std::vector<std::uint32_t>& members, double by) {
    spend(members.size());
    for (const std::uint32_t f : members) residual_[f] -= by;
    return by;
  }

  std::uint64_t* work_left_;
  const std::vector<Unknown>* unknowns_;
  const std::vector<std::vector<std::uint32_t>>* pair_flows_;
  std::vector<double> residual_;
  std::vector<double> added_;
  std::vector<std::size_t> active_;
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
  const std::vector<Unknown> unknowns = unknowns_of(usable, link_count, pair_size);
  if (unknowns.empty()) return fit;
  std::vector<std::vector<std::uint32_t>> pair_flows(pairs);
  std::vector<double> latencies;
  for (std::uint32_t f = 0; f < usable.size(); ++f) {
    if (pair_size[usable[f].siblings] < 2) continue;
    pair_flows[usable[f].siblings].push_back(f);
    latencies.push_back(usable[f].latency_ns);
  }
  const double resolution = kLatencyResolution * median(latencies);
  std::uint64_t work_left = kDelayWorkBudget;
  DelayModel model(usable, unknowns, pair_flows, &work_left);
  model.fit();  // the bases alone
  const auto scatter = [&] { return std::max(model.scatter(), resolution); };
  const auto error_of = [&](std::size_t u, double noise) { return noise / std::sqrt(unknowns[u].spread); };

  // Forward: of the unknowns that alone would add more than the floor, the one that alone explains
  // most, refitted with the rest; kept while it is kMinDelayZ errors above zero and above the
  // floor with 99.9 % confidence, each judged against the scatter with it in the model (before
  // it, its own delay is part of the scatter). A few faults take a few rounds; a fabric whose
  // every link adds delay stops at the budget or at kMaxDelaysNamed.
  std::vector<bool> tried(unknowns.size(), false);
  for (int rejected = 0; rejected < kMaxRejectedInARow;) {
    std::size_t best = unknowns.size();
    double most = 0;
    for (std::size_t u = 0; u < unknowns.size(); ++u) {
      if (tried[u]) continue;
      const double alone = model.alone(u);
      if (alone > min_added_ns && alone * alone * unknowns[u].spread > most) {
        best = u;
        most = alone * alone * unknowns[u].spread;
      }
    }
    if (best == unknowns.size()) break;
    tried[best] = true;
    model.activate(best);
    if (!model.fit()) {
      fit.complete = false;
      break;
    }
    const double error = error_of(best, scatter()), added = model.added(best);
    if (added < kMinDelayZ * error || added - kZ999 * error <= min_added_ns) {
      model.drop(best);
      model.fit();
      ++rejected;
      continue;
    }
    rejected = 0;
    if (model.active().size() >= kMaxDelaysNamed) {
      fit.complete = false;
      break;
    }
  }

  // Backward: the fewest links that explain the latencies. A delay the others (and the bases) can
  // take over at no cost is not its own; smallest first, each kept only when the fit without it
  // is worse by kMinDelayZ² of one flow's scatter.
  const double noise = scatter();
  fit.noise_ns = noise;
  std::vector<std::size_t> order = model.active();
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return model.added(a) < model.added(b); });
  std::map<std::size_t, double> evidence;
  for (const std::size_t u : order) {
    if (work_left < usable.size()) {
      fit.complete = false;  // held: judged by its standard error, the others as they are
      evidence[u] = std::pow(model.added(u) / error_of(u, noise), 2);
      continue;
    }
    model.spend(usable.size());  // the copy
    DelayModel without = model;
    without.drop(u);
    without.fit();
    evidence[u] = (without.rss() - model.rss()) / (noise * noise);
    if (evidence[u] < kMinDelayZ * kMinDelayZ) model = std::move(without);
  }
  for (const std::size_t u : model.active()) {
    const double added = model.added(u), error = error_of(u, noise);
    if (evidence[u] < kMinDelayZ * kMinDelayZ || added - kZ999 * error <= min_added_ns) continue;
    fit.delays.push_back({unknowns[u].links, added, std::max(0.0, added - kZ95 * error), added + kZ95 * error,
                          std::sqrt(evidence[u]), static_cast<std::uint32_t>(unknowns[u].flows.size()),
                          unknowns[u].siblings});
  }
  std::sort(fit.delays.begin(), fit.delays.end(),
            [](const LinkDelay& a, const LinkDelay& b) { return a.added_ns > b.added_ns; });
  return fit;
}

}  // namespace tusk
