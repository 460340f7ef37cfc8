#include "controller/engines/rdma/collective_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "common/counter_names.hpp"
#include "common/rates.hpp"
#include "controller/engines/rdma/collective.hpp"
#include "controller/verdict/stream_values.hpp"

namespace tusk {

namespace {

double counter_as_double(const proto::StreamCounters& stream, std::string_view name) {
  return static_cast<double>(counter_or_zero(stream, name));
}

double gauge(const proto::StreamCounters& stream, std::string_view name) {
  return gauge_of(stream, name).value_or(0);
}

}  // namespace

std::optional<CollectiveResult> collective_result(const TestOutcome& test) {
  // The collective, S and each rank's bytes per peer and step as the planner resolved them, in
  // the plans it sent.
  if (test.plans.empty()) return std::nullopt;
  const proto::RdmaTest& planned = test.plans.begin()->second.rdma();
  if (planned.collective().empty()) return std::nullopt;
  CollectiveResult result;
  result.collective = planned.collective();
  result.ranks = test.agents.size();
  result.rails = planned.rails();
  result.bytes_per_step = planned.collective_bytes();
  result.steps = planned.steps();

  // Flows (QPs) of one rank to one peer add up to that link; on rails a rank is an agent's NIC.
  struct LinkSum {
    double bytes = 0, step_time_mean_ns = 0, step_time_max_ns = 0;
    std::uint64_t steps = std::numeric_limits<std::uint64_t>::max();
  };
  using RankKey = std::pair<std::string, std::string>;  // agent, NIC (on rails)
  std::map<std::pair<RankKey, std::string>, LinkSum> links;
  for (const auto& verdict : test.streams) {
    const auto& stream = verdict.stream;
    if (stream.kind() != "flow") continue;
    LinkSum& link = links[{{verdict.agent, result.rails > 0 ? stream.nic() : ""}, stream.peer()}];
    link.bytes += counter_as_double(stream, counters::kTxBytes);
    link.steps = std::min<std::uint64_t>(link.steps,
                                         static_cast<std::uint64_t>(counter_as_double(stream, counters::kStepsDone)));
    link.step_time_mean_ns = std::max(link.step_time_mean_ns, gauge(stream, counters::kStepTimeMeanNs));
    link.step_time_max_ns = std::max(link.step_time_max_ns, gauge(stream, counters::kStepTimeMaxNs));
  }
  std::map<RankKey, RankResult> ranks;
  double best_rate = 0;
  for (const auto& [key, link] : links) {
    const auto& [rank_key, peer] = key;
    const double bytes_per_step = link.steps > 0 ? link.bytes / static_cast<double>(link.steps) : 0;
    const double rate = throughput_bps(bytes_per_step, link.step_time_mean_ns / 1e9);
    best_rate = std::max(best_rate, rate);
    result.links.push_back({rank_key.first, peer, rank_key.second, bytes_per_step, rate, 0});
    RankResult& rank = ranks[rank_key];
    rank.agent = rank_key.first;
    rank.nic = rank_key.second;
    // What the algorithm puts on the wire per rank (per rail: each rail is a ring of its own).
    if (const auto plan = test.plans.find(rank.agent); plan != test.plans.end()) {
      rank.model_bytes_per_step = static_cast<double>(plan->second.rdma().peer_bytes_per_step()) *
                                  static_cast<double>(plan->second.peers_size());
    }
    rank.steps_done = rank.steps_done == 0 ? link.steps : std::min(rank.steps_done, link.steps);
    rank.step_time_mean_s = std::max(rank.step_time_mean_s, link.step_time_mean_ns / 1e9);
    rank.step_time_max_s = std::max(rank.step_time_max_s, link.step_time_max_ns / 1e9);
  }
  for (auto& link : result.links) {
    link.below_best_percent = best_rate > 0 ? (1 - link.rate_bps / best_rate) * 100 : 0;
  }
  for (auto& [rank_key, rank] : ranks) {
    double sent = 0;
    for (const auto& link : result.links) {
      if (link.from == rank.agent && link.nic == rank.nic) sent += link.bytes_per_step;
    }
    rank.bytes_per_step = sent;
    if (rank.step_time_mean_s > result.time_per_step_s) {
      result.time_per_step_s = rank.step_time_mean_s;
      result.slowest_rank = rank.nic.empty() ? rank.agent : fmt::format("{} {}", rank.agent, rank.nic);
    }
    result.per_rank.push_back(rank);
  }
  if (result.time_per_step_s <= 0) return std::nullopt;
  result.algbw_bytes_per_s = static_cast<double>(result.bytes_per_step) / result.time_per_step_s;
  result.busbw_bytes_per_s = result.algbw_bytes_per_s * bus_bandwidth_factor(result.collective, result.ranks);
  return result;
}

}  // namespace tusk
