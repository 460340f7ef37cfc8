#include "controller/verdict/verdict.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/clock.hpp"
#include "common/counter_names.hpp"
#include "common/rates.hpp"
#include "common/units.hpp"
#include "controller/engines/engine_slice.hpp"
#include "controller/profile/threshold_catalog.hpp"
#include "controller/verdict/stream_values.hpp"

namespace tusk {

namespace {

std::optional<double> optional_counter(const proto::StreamCounters& stream, std::string_view name) {
  const auto value = counter_of(stream, name);
  return value ? std::optional<double>(static_cast<double>(*value)) : std::nullopt;
}

// How late the stream began within a window of `duration_s`, from the agent's gauge: a value
// that is not a delay inside the window (negative, NaN, past its end) is none.
double start_delay_s(const proto::StreamCounters& stream, double duration_s) {
  const auto it = stream.gauges().find(std::string(counters::kTrafficStartDelayMs));
  if (it == stream.gauges().end()) return 0;
  const double delay_s = it->second / 1e3;
  return delay_s > 0 && delay_s < duration_s ? delay_s : 0;
}

}  // namespace

std::map<std::string, double> compute_metrics(const proto::StreamCounters& stream, double duration_s) {
  namespace c = counters;
  std::map<std::string, double> metrics;
  // Throughput is what arrived where the receiver counts it, else what was sent, from when the
  // stream first carried data (an RDMA QP's first post may come a little after the start time).
  const auto bytes = optional_counter(stream, c::kRxBytes) ? optional_counter(stream, c::kRxBytes)
                                                           : optional_counter(stream, c::kTxBytes);
  if (bytes && duration_s > 0)
    metrics["throughput_bps"] = throughput_bps(*bytes, duration_s - start_delay_s(stream, duration_s));
  const auto bits = optional_counter(stream, c::kBitsCompared);
  if (bits && *bits > 0) metrics["ber"] = optional_counter(stream, c::kBitErrors).value_or(0) / *bits;
  // Frames lost in traffic gaps belong to the flap (max_flaps judges it); loss is what the link
  // lost while it carried traffic, over everything that was sent.
  const auto lost = optional_counter(stream, c::kLostFrames);
  const auto received = optional_counter(stream, c::kRxFrames);
  const double gap_lost = optional_counter(stream, c::kGapLostFrames).value_or(0);
  if (lost && received && *lost + *received + gap_lost > 0) {
    metrics["loss_ratio"] = *lost / (*lost + *received + gap_lost);
  }
  for (auto name : {c::kErroredFrames,      c::kLostFrames,      c::kLinkFlaps,
                    c::kCompletionErrors,   c::kIntegrityErrors, c::kRetransmits,
                    c::kHostDrops,          c::kBitErrors,       c::kStalls,
                    c::kTxSkippedFrames,    c::kConnectFailures, c::kCeMarked,
                    c::kDscpRewrites,       c::kOutOfSequence,   c::kPacketSeqErr,
                    c::kLocalAckTimeoutErr, c::kNpCnpSent,       c::kNpEcnMarkedRocePackets,
                    c::kSymbolError,        c::kPauseFrames,     c::kRxDiscards}) {
    if (auto value = optional_counter(stream, name)) metrics[std::string(name)] = *value;
  }
  // A NIC port's corrected bit ratio (mlx5's counters.rst: rx_corrected_bits_phy / rx_bits_phy over a
  // time frame). Bits in codewords FEC could not correct are not in it (symbol_error counts those).
  const auto phy_bits = optional_counter(stream, c::kRxPhyBits);
  const auto corrected_bits = optional_counter(stream, c::kRxFecCorrectedBits);
  if (phy_bits && corrected_bits && *phy_bits > 0) metrics["pre_fec_ber"] = *corrected_bits / *phy_bits;
  // A gap is judged as a flap where the port counts it as one (ports without link state do);
  // only the gaps that no flap accounts for are traffic gaps of their own.
  if (auto gaps = optional_counter(stream, c::kTrafficGaps)) {
    metrics[std::string(c::kTrafficGaps)] = std::max(0.0, *gaps - optional_counter(stream, c::kLinkFlaps).value_or(0));
  }
  if (auto it = stream.gauges().find(std::string(c::kLatencyP99Ns)); it != stream.gauges().end()) {
    metrics[it->first] = it->second;
  }
  return metrics;
}

namespace {

// A threshold's value or a measurement of its metric as the rest of Tusk prints that kind of value
// ("8.00 Mbit/s", "250 ms"), not "7.99992e+06".
std::string value_text(const Threshold& threshold, double value) {
  const ThresholdKind* kind = find_threshold(threshold.key);
  if (kind && std::isfinite(value)) {
    switch (kind->value) {
      case ThresholdKind::Value::BitRate:
        return units::format_bit_rate(value);
      case ThresholdKind::Value::Duration:
        if (std::abs(value) < 9e18) return units::format_duration(std::chrono::nanoseconds(std::llround(value)));
        break;
      case ThresholdKind::Value::Ratio:
      case ThresholdKind::Value::Count:
        break;
    }
  }
  return fmt::format("{:.6g}", value);
}

}  // namespace

std::string ThresholdCheck::describe() const {
  if (!caveat.empty()) return caveat;
  const char* relation = threshold.bound == Bound::Max ? "max" : "min";
  if (!measured) {
    return fmt::format("{} not measured (threshold {} {})", threshold.metric, relation,
                       value_text(threshold, threshold.value));
  }
  const char* sign =
      passed ? (threshold.bound == Bound::Max ? "<=" : ">=") : (threshold.bound == Bound::Max ? ">" : "<");
  std::string text = fmt::format("{} {} {} {} {}", threshold.metric, value_text(threshold, *measured), sign, relation,
                                 value_text(threshold, threshold.value));
  if (threshold.implicit && !passed) {
    text += fmt::format(" (a safe default: set {} in the test's thresholds to allow some)", threshold.key);
  }
  return text;
}

namespace {

// Whether `key` is a safe default or sets how much of one's fault is accepted (max_ber).
bool judges_a_safe_default(std::string_view key) {
  const auto& catalog = threshold_catalog();
  return std::any_of(catalog.begin(), catalog.end(), [key](const ThresholdKind& kind) {
    return kind.safe_default &&
           (kind.key == key || std::find(kind.relaxed_by.begin(), kind.relaxed_by.end(), key) != kind.relaxed_by.end());
  });
}

bool judges_the_whole_test(const Threshold& threshold) {
  const ThresholdKind* kind = find_threshold(threshold.key);
  return kind && kind->scope == ThresholdKind::Scope::Test;
}

}  // namespace

bool ThresholdCheck::tolerated_fault() const {
  return passed && measured && *measured > 0 && threshold.bound == Bound::Max && judges_a_safe_default(threshold.key);
}

bool StreamVerdict::passed() const {
  return std::all_of(checks.begin(), checks.end(), [](const ThresholdCheck& check) { return check.passed; });
}

std::vector<std::string> StreamVerdict::warnings() const {
  std::vector<std::string> lines;
  for (const auto& check : checks) {
    if (!check.tolerated_fault()) continue;
    lines.push_back(fmt::format("{} {:.6g} (allowed: {} {:g})", check.threshold.metric, *check.measured,
                                check.threshold.key, check.threshold.value));
  }
  return lines;
}

namespace {

std::optional<BerResult> ber_result(const TestSpec& test, const proto::StreamCounters& stream, double duration_s) {
  const auto bits = counter_of(stream, counters::kBitsCompared);
  const EngineSlice* engine = find_engine(test.engine);
  if (!bits || !engine || !engine->ber_target) return std::nullopt;
  const auto held_to = engine->ber_target(test);
  if (!held_to) return std::nullopt;
  // The loader always sets both (the engine's defaults); a spec made otherwise gets no bound.
  const double confidence = held_to->confidence;
  const double target = held_to->target_ber;
  if (!(confidence > 0 && confidence < 1) || !(target > 0 && target <= 1)) return std::nullopt;
  // An agent's count of errored bits can never exceed the bits it compared; a bogus one must not
  // take the report down with it.
  const std::uint64_t errors = std::min(counter_of(stream, counters::kBitErrors).value_or(0), *bits);
  BerResult result;
  result.estimate = estimate_ber(errors, *bits, confidence);
  result.target = target;
  result.bits_needed_for_target = bits_needed(result.target, confidence, errors);
  const double rate = duration_s > 0 ? static_cast<double>(*bits) / duration_s : 0;
  if (errors == 0) result.seconds_more_for_target = seconds_needed(result.target, confidence, *bits, rate, errors);
  return result;
}

}  // namespace

StreamVerdict judge_stream(const TestSpec& test, const std::string& agent, proto::StreamCounters stream,
                           double duration_s) {
  StreamVerdict verdict;
  verdict.agent = agent;
  verdict.stream = std::move(stream);
  const proto::StreamCounters& counted = verdict.stream;
  verdict.metrics = compute_metrics(counted, duration_s);
  verdict.ber = ber_result(test, counted, duration_s);
  for (const auto& threshold : test.thresholds) {
    if (judges_the_whole_test(threshold) || !kind_judges(counted.kind(), threshold.metric)) continue;
    ThresholdCheck check;
    check.threshold = threshold;
    if (auto it = verdict.metrics.find(threshold.metric); it != verdict.metrics.end()) {
      check.measured = it->second;
      check.passed = threshold.bound == Bound::Max ? it->second <= threshold.value : it->second >= threshold.value;
    } else if (threshold.implicit) {
      continue;  // a safe default judges what a stream measures (no integrity errors without data_check)
    }
    // A BERT that blames the cable for a slow receiver is worse than none: loss on a host that
    // dropped frames itself judges nothing about the link, so it cannot pass, and says why.
    const auto host_drops = verdict.metrics.find(std::string(counters::kHostDrops));
    const bool loss_metric = threshold.metric == "loss_ratio" || threshold.metric == counters::kLostFrames;
    if (loss_metric && host_drops != verdict.metrics.end() && host_drops->second > 0) {
      check.passed = false;
      check.not_the_link = ThresholdCheck::NotTheLink::HostDrops;
      check.caveat = fmt::format(
          "{} not judged: the receiving host dropped {:.0f} frames itself (socket/ring/NIC drops), so its loss "
          "is not a verdict on the link; lower the rate or give the receiver more cores",
          threshold.metric, host_drops->second);
    }
    verdict.checks.push_back(std::move(check));
  }
  return verdict;
}

void judge_windows(StreamVerdict& verdict, const WindowTally& windows) {
  verdict.windows = std::make_shared<const WindowTally>(windows);
  if (windows.failed == 0) return;
  const auto when = [&](const WindowFailure& failure) {
    return fmt::format("{} (+{}): {}", utc_iso_time(failure.start_agent_ns),
                       units::format_duration(std::chrono::milliseconds(failure.start_ms)), failure.text);
  };
  std::vector<std::string> which;
  for (std::size_t i = 0; i < windows.thresholds.size() && i < windows.failed_by_threshold.size(); ++i) {
    if (windows.failed_by_threshold[i] > 0) {
      which.push_back(fmt::format("{} in {}", windows.thresholds[i].key, windows.failed_by_threshold[i]));
    }
  }
  ThresholdCheck check;
  check.threshold = Threshold{"window", "failed_windows", Bound::Max, 0, {}, false};
  check.measured = windows.failed;
  check.passed = false;
  check.caveat = fmt::format("{} of {} windows of {} failed ({}); the first at {}", windows.failed, windows.judged,
                             units::format_duration(windows.window), fmt::join(which, ", "), when(*windows.first));
  if (windows.worst && windows.worst->window != windows.first->window) {
    check.caveat += fmt::format("; the worst at {}", when(*windows.worst));
  }
  verdict.checks.push_back(std::move(check));
}

namespace {

// The engine's description of a stream kind, or nullptr for a kind no engine judges.
const StreamKind* stream_kind(const std::string& kind) {
  for (const EngineSlice* engine : engine_table()) {
    for (const auto& described : engine->stream_kinds) {
      if (described.kind == kind) return &described;
    }
  }
  return nullptr;
}

}  // namespace

bool kind_judges(const std::string& kind, const std::string& metric) {
  if (kind.empty()) return true;  // a stream that names no kind: the strict default, judged on everything
  const StreamKind* described = stream_kind(kind);
  if (!described) return false;  // "tx", "port" and anything unknown: informational
  return described->judged_on_everything ||
         std::find(described->judged_metrics.begin(), described->judged_metrics.end(), metric) !=
             described->judged_metrics.end();
}

bool informational_kind(const std::string& kind) {
  return !kind.empty() && !stream_kind(kind);
}

bool kind_receives(const std::string& kind) {
  const StreamKind* described = stream_kind(kind);
  return described && described->receives;
}

std::string stream_title(const StreamVerdict& verdict) {
  const auto& stream = verdict.stream;
  if (stream.peer().empty()) return fmt::format("{} {}", verdict.agent, stream.stream_id());
  const bool receives = kind_receives(stream.kind());
  return fmt::format("{} -> {} ({} {})", receives ? stream.peer() : verdict.agent,
                     receives ? verdict.agent : stream.peer(), verdict.agent, stream.stream_id());
}

bool kind_counts_a_flow(const std::string& kind) {
  if (kind.empty()) return true;
  const StreamKind* described = stream_kind(kind);
  return described && described->per_flow;
}

namespace {

bool judged_on_some_stream(const Threshold& threshold, const std::vector<StreamVerdict>& streams) {
  return std::any_of(streams.begin(), streams.end(), [&](const StreamVerdict& verdict) {
    return std::any_of(verdict.checks.begin(), verdict.checks.end(),
                       [&](const ThresholdCheck& check) { return check.threshold.metric == threshold.metric; });
  });
}

}  // namespace

std::vector<std::string> unjudged_thresholds(const TestSpec& test, const std::vector<StreamVerdict>& streams) {
  std::vector<std::string> problems;
  for (const auto& threshold : test.thresholds) {
    if (threshold.implicit || judges_the_whole_test(threshold) || judged_on_some_stream(threshold, streams)) continue;
    problems.push_back(fmt::format("threshold on {} was judged on no stream", threshold.metric));
  }
  return problems;
}

std::vector<std::string> unmeasured_defaults(const TestSpec& test, const std::vector<StreamVerdict>& streams) {
  std::vector<std::string> warnings;
  for (const auto& threshold : test.thresholds) {
    if (!threshold.implicit || judges_the_whole_test(threshold) || judged_on_some_stream(threshold, streams)) continue;
    warnings.push_back(fmt::format("{} not measured: no stream of this test reports it", threshold.metric));
  }
  return warnings;
}

double agents_lost_allowed(const TestSpec& test) {
  for (const auto& threshold : test.thresholds) {
    if (threshold.metric == counters::kAgentsLost) return threshold.value;
  }
  return 0;
}

}  // namespace tusk
