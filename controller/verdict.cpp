#include "controller/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/counter_names.hpp"

namespace tusk {

namespace {

std::optional<double> counter(const proto::StreamCounters& stream, std::string_view name) {
  auto it = stream.counters().find(std::string(name));
  if (it == stream.counters().end()) return std::nullopt;
  return static_cast<double>(it->second);
}

}  // namespace

std::map<std::string, double> compute_metrics(const proto::StreamCounters& stream, double duration_s) {
  namespace c = counters;
  std::map<std::string, double> metrics;
  // Throughput is what arrived where the receiver counts it, else what was sent.
  const auto bytes = counter(stream, c::kRxBytes) ? counter(stream, c::kRxBytes) : counter(stream, c::kTxBytes);
  if (bytes && duration_s > 0) metrics["throughput_bps"] = *bytes * 8.0 / duration_s;
  const auto bits = counter(stream, c::kBitsCompared);
  if (bits && *bits > 0) metrics["ber"] = counter(stream, c::kBitErrors).value_or(0) / *bits;
  const auto lost = counter(stream, c::kLostFrames);
  const auto received = counter(stream, c::kRxFrames);
  if (lost && received && *lost + *received > 0) metrics["loss_ratio"] = *lost / (*lost + *received);
  for (auto name : {c::kErroredFrames, c::kLostFrames, c::kLinkFlaps, c::kCompletionErrors, c::kIntegrityErrors,
                    c::kRetransmits, c::kHostDrops, c::kBitErrors}) {
    if (auto value = counter(stream, name)) metrics[std::string(name)] = *value;
  }
  if (auto it = stream.gauges().find(std::string(c::kLatencyP99Ns)); it != stream.gauges().end()) {
    metrics[it->first] = it->second;
  }
  return metrics;
}

std::string ThresholdCheck::describe() const {
  if (!caveat.empty()) return caveat;
  const char* relation = threshold.bound == Bound::Max ? "max" : "min";
  if (!measured) return fmt::format("{} not measured (threshold {} {:g})", threshold.metric, relation, threshold.value);
  const char* sign = passed ? (threshold.bound == Bound::Max ? "<=" : ">=") : (threshold.bound == Bound::Max ? ">" : "<");
  return fmt::format("{} {:.6g} {} {} {:.6g}", threshold.metric, *measured, sign, relation, threshold.value);
}

bool StreamVerdict::passed() const {
  return std::all_of(checks.begin(), checks.end(), [](const ThresholdCheck& check) { return check.passed; });
}

StreamVerdict judge_stream(const TestSpec& test, const std::string& agent, const proto::StreamCounters& stream,
                           double duration_s) {
  StreamVerdict verdict;
  verdict.agent = agent;
  verdict.stream = stream;
  verdict.metrics = compute_metrics(stream, duration_s);
  for (const auto& threshold : test.thresholds) {
    if (!kind_judges(stream.kind(), threshold.metric)) continue;
    ThresholdCheck check;
    check.threshold = threshold;
    if (auto it = verdict.metrics.find(threshold.metric); it != verdict.metrics.end()) {
      check.measured = it->second;
      check.passed = threshold.bound == Bound::Max ? it->second <= threshold.value : it->second >= threshold.value;
    }
    // A BERT that blames the cable for a slow receiver is worse than none: loss on a host that
    // dropped frames itself judges nothing about the link, so it cannot pass, and says why.
    const auto host_drops = verdict.metrics.find(std::string(counters::kHostDrops));
    const bool loss_metric = threshold.metric == "loss_ratio" || threshold.metric == counters::kLostFrames;
    if (loss_metric && host_drops != verdict.metrics.end() && host_drops->second > 0) {
      check.passed = false;
      check.caveat = fmt::format(
          "{} not judged: the receiving host dropped {:.0f} frames itself (socket/ring/NIC drops), so its loss "
          "is not a verdict on the link; lower the rate or give the receiver more cores",
          threshold.metric, host_drops->second);
    }
    verdict.checks.push_back(std::move(check));
  }
  return verdict;
}

bool kind_judges(const std::string& kind, const std::string& metric) {
  namespace c = counters;
  const auto in = [&](std::initializer_list<std::string_view> metrics) {
    return std::find(metrics.begin(), metrics.end(), metric) != metrics.end();
  };
  if (kind == "rx" || kind.empty()) return true;  // the strict default: judged on everything
  if (kind == "flow") return in({"throughput_bps", c::kCompletionErrors, c::kLatencyP99Ns});
  if (kind == "sink") return in({"throughput_bps", c::kIntegrityErrors, c::kCompletionErrors});
  if (kind == "read") return in({"throughput_bps", c::kIntegrityErrors, c::kCompletionErrors, c::kLatencyP99Ns});
  if (kind == "source") return in({c::kCompletionErrors});
  if (kind == "nic") return in({c::kRetransmits, c::kLinkFlaps});
  return false;  // "tx" and anything unknown: informational
}

bool informational_kind(const std::string& kind) { return kind == "tx" || kind == "port"; }

std::vector<std::string> unjudged_thresholds(const TestSpec& test, const std::vector<StreamVerdict>& streams) {
  std::vector<std::string> problems;
  for (const auto& threshold : test.thresholds) {
    const bool judged = std::any_of(streams.begin(), streams.end(), [&](const StreamVerdict& verdict) {
      return std::any_of(verdict.checks.begin(), verdict.checks.end(),
                         [&](const ThresholdCheck& check) { return check.threshold.metric == threshold.metric; });
    });
    if (!judged) problems.push_back(fmt::format("threshold on {} was judged on no stream", threshold.metric));
  }
  return problems;
}

}  // namespace tusk
