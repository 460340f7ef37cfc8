#include "controller/method/fabric_methods.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/counter_names.hpp"
#include "common/units.hpp"
#include "controller/verdict/path_faults.hpp"
#include "controller/verdict/stream_values.hpp"

namespace tusk {
namespace {

namespace c = counters;

// A peer's counts are bounded before they are summed (wire-bounds.md).
constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 48;

std::uint64_t bounded(const proto::StreamCounters& stream, std::string_view name) {
  return std::min(counter_or_zero(stream, name), kMaxCount);
}

// log P(X >= k) for X ~ Binomial(n, p), summed in log space so that thousands of flows stay exact.
double binomial_tail(std::size_t n, std::size_t k, double p) {
  if (k == 0) return 1;
  double total = 0;
  for (std::size_t j = k; j <= n; ++j) {
    const double log_term = std::lgamma(n + 1.0) - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0) +
                            static_cast<double>(j) * std::log(p) + static_cast<double>(n - j) * std::log1p(-p);
    const double term = std::exp(log_term);
    total += term;
    if (term < total * 1e-17) break;  // the tail past the mean falls off faster than geometrically
  }
  return total;
}

std::string trim(std::string text) {
  const auto first = text.find_first_not_of(" \t");
  const auto last = text.find_last_not_of(" \t");
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

std::string device_of(const std::string& end) {
  return end.substr(0, end.find(':'));
}

}  // namespace

double predicted_max_over_mean(std::size_t flows, std::size_t uplinks, double alpha) {
  if (flows == 0 || uplinks < 2) return 0;
  const double p = 1.0 / static_cast<double>(uplinks);
  const auto least = static_cast<std::size_t>(std::ceil(static_cast<double>(flows) * p));
  for (std::size_t k = std::max<std::size_t>(least, 1); k <= flows; ++k) {
    if (static_cast<double>(uplinks) * binomial_tail(flows, k, p) <= alpha) {
      return static_cast<double>(k) * static_cast<double>(uplinks) / static_cast<double>(flows);
    }
  }
  return 0;
}

EcmpBalanceResult judge_ecmp_balance(const TestOutcome& step, const MethodSpec& method,
                                     const FabricTopology* topology) {
  EcmpBalanceResult result;
  result.max_imbalance = method.max_imbalance;
  result.min_fairness = method.min_fairness;
  const std::vector<TracedFlowPath> flows = traced_flows(step.localisation);
  std::set<std::string> hosts;
  for (const auto& flow : flows) {
    if (flow.node_names.empty()) continue;
    hosts.insert(flow.node_names.front());
    hosts.insert(flow.node_names.back());
  }
  // Per leaf (the flow's first hop), the bytes and flows each uplink out of it carried.
  std::map<std::string, std::map<std::string, UplinkLoad>> leaves;
  for (const auto& flow : flows) {
    if (flow.links.size() < 3 || flow.node_names.size() < 3 || !flow.rx_stream) continue;  // stayed on its leaf
    const std::string& leaf = flow.node_names[1];
    UplinkLoad& load = leaves[leaf][flow.links[1]];
    load.link = flow.links[1];
    load.bytes += bounded(step.streams.at(*flow.rx_stream).stream, c::kRxBytes);
    ++load.flows;
  }
  if (leaves.empty()) {
    result.problems.push_back(
        "no traced flow left a leaf over an uplink: ecmp_balance reads the flows' paths (encapsulation: ipv4_udp "
        "with trace_rate above 0, hosts on different leaves)");
    return result;
  }
  // Uplinks no flow took count too: all on one spine is the imbalance to find.
  if (topology) {
    for (auto& [leaf, uplinks] : leaves) {
      for (const auto& link : topology->links()) {
        for (const bool reversed : {false, true}) {
          const LinkEnd& out = reversed ? link.b : link.a;
          const LinkEnd& in = reversed ? link.a : link.b;
          if (out.device != leaf || hosts.contains(in.device)) continue;
          const std::string key = fmt::format("{} -> {}", out.text(), in.text());
          uplinks.try_emplace(key, UplinkLoad{key, 0, 0});
        }
      }
    }
  }
  for (const auto& [leaf, uplinks] : leaves) {
    LeafBalance balance;
    balance.leaf = leaf;
    double sum = 0, squares = 0, largest = 0;
    std::size_t most_flows = 0;
    for (const auto& [key, load] : uplinks) {
      balance.uplinks.push_back(load);
      balance.flows += load.flows;
      const auto bytes = static_cast<double>(load.bytes);
      sum += bytes;
      squares += bytes * bytes;
      largest = std::max(largest, bytes);
      most_flows = std::max(most_flows, load.flows);
    }
    const std::size_t m = balance.uplinks.size();
    if (m < 2) {
      result.warnings.push_back(fmt::format(
          "{}: its flows left over one uplink ({}) and the topology file names no other: nothing to balance", leaf,
          balance.uplinks.front().link));
      balance.verdict = "one uplink";
      result.leaves.push_back(std::move(balance));
      continue;
    }
    balance.max_over_mean = sum > 0 ? largest / (sum / static_cast<double>(m)) : 0;
    balance.fairness = squares > 0 ? sum * sum / (static_cast<double>(m) * squares) : 0;
    balance.predicted_max_over_mean = predicted_max_over_mean(balance.flows, m);
    std::vector<std::string> failed;
    if (method.max_imbalance && balance.max_over_mean > *method.max_imbalance) {
      failed.push_back(
          fmt::format("max/mean {:.3f} > max_imbalance {:g}", balance.max_over_mean, *method.max_imbalance));
    }
    if (method.min_fairness && balance.fairness < *method.min_fairness) {
      failed.push_back(fmt::format("Jain's index {:.3f} < min_fairness {:g}", balance.fairness, *method.min_fairness));
    }
    const double flow_max_over_mean =
        static_cast<double>(most_flows) * static_cast<double>(m) / static_cast<double>(balance.flows);
    if (balance.predicted_max_over_mean > 0 && flow_max_over_mean >= balance.predicted_max_over_mean) {
      failed.push_back(
          fmt::format("{} of its {} flows on one of {} uplinks: hashing each flow at random puts that many on one with "
                      "probability under 0.1 % (the hash does not spread flows: an L3-only hash, or a polarised one?)",
                      most_flows, balance.flows, m));
    } else if (balance.predicted_max_over_mean == 0) {
      result.warnings.push_back(
          fmt::format("{}: {} flows over {} uplinks are too few to tell a hash that spreads flows from chance (give "
                      "more flows per peer)",
                      leaf, balance.flows, m));
    }
    balance.passed = failed.empty();
    balance.verdict = balance.passed
                          ? fmt::format("max/mean {:.3f}, Jain's index {:.3f}", balance.max_over_mean, balance.fairness)
                          : fmt::format("{}", fmt::join(failed, "; "));
    if (!balance.passed) result.problems.push_back(fmt::format("ECMP balance at {}: {}", leaf, balance.verdict));
    result.leaves.push_back(std::move(balance));
  }
  return result;
}

LinkFailureResult judge_link_failure(const TestOutcome& step, const MethodSpec& method, const FabricTopology* topology,
                                     const HookRun& hook) {
  LinkFailureResult result;
  result.link = method.link;
  result.command = hook.command;
  result.at_s = static_cast<double>(method.at.count()) / 1e3;
  result.ran_at_s = hook.ran_at_s;
  result.exit_status = hook.exit_status;
  if (method.max_convergence) result.max_convergence_ms = static_cast<double>(method.max_convergence->count());
  if (!hook.ran_at_s) {
    result.problems.push_back(fmt::format("the down command did not run: the test ended first ({})", hook.command));
  } else if (!hook.exit_status) {
    result.problems.push_back(
        fmt::format("the down command had not ended when the test did: killed ({})", hook.command));
  } else if (*hook.exit_status != 0) {
    result.problems.push_back(fmt::format("the down command exited {}: the link may not have gone down ({})",
                                          *hook.exit_status, hook.command));
  }
  const auto arrow = method.link.find("<->");
  const std::string a = device_of(trim(method.link.substr(0, arrow)));
  const std::string b = device_of(trim(method.link.substr(arrow == std::string::npos ? 0 : arrow + 3)));
  if (!topology) {
    result.problems.push_back(
        "which flows crossed the link is read from their traced paths by the topology file's names: run with "
        "--topology");
  }
  // The devices a flow's path went through at each hop: the one that answered most, and any other
  // that answered (the path moved during the test).
  const auto devices_at = [&](const proto::TraceHop& hop) {
    std::set<std::string> devices;
    for (const auto* address : {&hop.address(), &hop.other_address()}) {
      if (address->empty() || !topology) continue;
      if (const auto place = topology->find(*address)) devices.insert(place->device);
    }
    return devices;
  };
  std::vector<double> resumes;
  std::vector<std::string> collateral;
  for (const auto& traced : traced_flows(step.localisation)) {
    if (!traced.rx_stream) continue;  // one test's flows: every stream is kept
    const StreamVerdict& rx = step.streams.at(*traced.rx_stream);
    FailedLinkFlow flow;
    flow.sender = traced.sender;
    flow.receiver = traced.receiver;
    flow.flow = flow_text(rx.stream);
    if (traced.tx_stream && !traced.node_names.empty()) {
      std::set<std::string> before{traced.node_names.front()};
      for (const auto& hop : step.streams.at(*traced.tx_stream).stream.path()) {
        const std::set<std::string> here = devices_at(hop);
        if ((before.contains(a) && here.contains(b)) || (before.contains(b) && here.contains(a))) flow.crossed = true;
        before = here;
      }
    }
    flow.lost_frames = bounded(rx.stream, c::kLostFrames) + bounded(rx.stream, c::kGapLostFrames);
    flow.gaps = bounded(rx.stream, c::kTrafficGaps);
    const std::uint64_t flaps = bounded(rx.stream, c::kLinkFlaps);
    flow.resumed = flow.gaps <= flaps;
    if (flaps > 0) {
      // Bounded by the test: a peer's larger number says nothing more.
      flow.resume_ms = std::min<double>(static_cast<double>(bounded(rx.stream, c::kLongestGapMs)),
                                        static_cast<double>(step.spec.duration.count()));
    }
    const bool lost = flow.lost_frames > 0 || flow.gaps > 0;
    if (flow.crossed) {
      ++result.crossed;
      if (lost) ++result.crossed_and_lost;
      if (flow.resume_ms) resumes.push_back(*flow.resume_ms);
      if (!flow.resumed) {
        result.problems.push_back(fmt::format("{} -> {} ({}) crossed {} and its traffic never resumed", flow.sender,
                                              flow.receiver, flow.flow, method.link));
      }
    } else if (lost) {
      ++result.collateral;
      collateral.push_back(
          fmt::format("{} -> {} ({}: {} lost)", flow.sender, flow.receiver, flow.flow, flow.lost_frames));
    }
    result.flows.push_back(std::move(flow));
  }
  if (result.crossed == 0 && topology) {
    result.problems.push_back(
        fmt::format("no traced flow crossed {}: nothing tested its failure (are its ends named as in {}, and do flows "
                    "hash onto it?)",
                    method.link, topology->file()));
  }
  if (!collateral.empty()) {
    const std::size_t shown = std::min<std::size_t>(collateral.size(), 5);
    result.problems.push_back(
        fmt::format("{} flow(s) that never crossed {} lost traffic when it failed: {}{}", collateral.size(),
                    method.link, fmt::join(collateral.begin(), collateral.begin() + static_cast<long>(shown), "; "),
                    collateral.size() > shown ? fmt::format(" and {} more", collateral.size() - shown) : ""));
  }
  if (result.crossed > result.crossed_and_lost) {
    result.warnings.push_back(fmt::format("{} of {} flows that crossed {} lost nothing and had no gap",
                                          result.crossed - result.crossed_and_lost, result.crossed, method.link));
  }
  if (!resumes.empty()) {
    std::sort(resumes.begin(), resumes.end());
    result.convergence_min_ms = resumes.front();
    result.convergence_max_ms = resumes.back();
    const std::size_t n = resumes.size();
    result.convergence_median_ms = n % 2 == 1 ? resumes[n / 2] : (resumes[n / 2 - 1] + resumes[n / 2]) / 2;
    if (result.max_convergence_ms && *result.convergence_max_ms > *result.max_convergence_ms) {
      result.problems.push_back(
          fmt::format("convergence after {} failed: the slowest flow resumed after {:g} ms, more "
                      "than max_convergence {:g} ms",
                      method.link, *result.convergence_max_ms, *result.max_convergence_ms));
    }
  }
  return result;
}

void judge_fabric_method(MethodResult& result, const MethodSpec& method, const FabricTopology* topology,
                         const std::optional<HookRun>& hook) {
  if (result.step_outcomes.empty() || result.steps.empty()) return;
  const TestOutcome& step = result.step_outcomes.front();
  const std::vector<std::string>* problems = nullptr;
  if (method.kind == MethodKind::EcmpBalance) {
    result.ecmp_balance = judge_ecmp_balance(step, method, topology);
    problems = &result.ecmp_balance->problems;
  } else if (method.kind == MethodKind::LinkFailure) {
    result.link_failure =
        judge_link_failure(step, method, topology, hook.value_or(HookRun{method.down_command, {}, {}}));
    problems = &result.link_failure->problems;
  }
  if (problems && !problems->empty() && result.steps.front().verdict == TestVerdict::Pass) {
    result.steps.front().verdict = TestVerdict::Fail;
  }
}

}  // namespace tusk
