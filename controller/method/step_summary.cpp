#include "controller/method/step_summary.hpp"

#include <algorithm>
#include <set>

#include "common/counter_names.hpp"
#include "common/rates.hpp"
#include "controller/verdict/stream_values.hpp"
#include "controller/verdict/verdict.hpp"

namespace tusk {
namespace {

double metric(const StreamVerdict& stream, std::string_view name) {
  const auto it = stream.metrics.find(std::string(name));
  return it == stream.metrics.end() ? 0 : it->second;
}

// Every frame a receiver's sender sent and it never got. A method measures loss, and a port it
// overloads can drop one flow's frames for long enough to read as a traffic gap (tail drop locks a
// paced flow out): the frames lost in gaps are lost frames here, not a flap's.
std::uint64_t lost_frames(const StreamVerdict& stream) {
  return static_cast<std::uint64_t>(metric(stream, counters::kLostFrames)) +
         counter_or_zero(stream.stream, counters::kGapLostFrames);
}

void keep_worst(std::optional<double>& worst, const proto::StreamCounters& stream, std::string_view gauge) {
  if (const auto value = gauge_of(stream, gauge)) worst = std::max(worst.value_or(*value), *value);
}

}  // namespace

void summarise_step(const TestOutcome& outcome, MethodStep& step) {
  namespace c = counters;
  std::set<std::string> senders;
  double sent_bytes = 0;
  for (const auto& stream : outcome.streams) {
    const auto& counters = stream.stream;
    if (kind_receives(counters.kind())) {
      step.rx_frames += counter_or_zero(counters, c::kRxFrames);
      step.lost_frames += lost_frames(stream);
      step.host_drops += counter_or_zero(counters, c::kHostDrops);
      step.ce_marked += counter_or_zero(counters, c::kCeMarked);
      step.rx_bps += metric(stream, "throughput_bps");
    } else if (counter_or_zero(counters, c::kTxFrames) > 0 || counter_or_zero(counters, c::kTxBytes) > 0) {
      // Frames (dpdk) or bytes alone (an RDMA flow's messages).
      step.tx_frames += counter_or_zero(counters, c::kTxFrames);
      step.tx_messages += counter_or_zero(counters, c::kTxMessages);
      sent_bytes += static_cast<double>(counter_or_zero(counters, c::kTxBytes));
      senders.insert(stream.agent);
    }
    keep_worst(step.latency_p50_ns, counters, c::kLatencyP50Ns);
    keep_worst(step.latency_p99_ns, counters, c::kLatencyP99Ns);
    keep_worst(step.latency_max_ns, counters, c::kLatencyMaxNs);
    // The NIC's own view of the step (RDMA ports): judged one by one elsewhere, summed here.
    for (const auto name : {c::kOutOfSequence, c::kPacketSeqErr, c::kLocalAckTimeoutErr, c::kNpCnpSent,
                            c::kNpEcnMarkedRocePackets, c::kRetransmits}) {
      if (const auto it = stream.metrics.find(std::string(name)); it != stream.metrics.end()) {
        step.nic[it->first] += it->second;
      }
    }
  }
  const double sent = static_cast<double>(step.rx_frames + step.lost_frames);
  step.loss_ratio = sent > 0 ? static_cast<double>(step.lost_frames) / sent : 0;
  const double seconds = outcome.spec.duration.count() / 1e3;
  if (!senders.empty()) step.sent_bps = throughput_bps(sent_bytes, seconds) / static_cast<double>(senders.size());
  if (seconds > 0) step.messages_per_s = static_cast<double>(step.tx_messages) / seconds;
  step.sender_short = step.offered_bps > 0 && step.sent_bps < 0.98 * step.offered_bps;
  step.verdict = outcome.verdict;
}

CongestionResult congestion_of(const TestOutcome& outcome, double allowed) {
  CongestionResult result;
  result.uncongested_loss_allowed = allowed;
  if (outcome.agents.size() < 2) return result;
  result.congested_agent = outcome.agents[0];
  result.uncongested_agent = outcome.agents[1];
  for (const auto& stream : outcome.streams) {
    if (!kind_receives(stream.stream.kind())) continue;
    const auto rx = counter_or_zero(stream.stream, counters::kRxFrames);
    const auto lost = lost_frames(stream);
    if (stream.agent == result.congested_agent) {
      result.congested_rx_frames += rx;
      result.congested_lost_frames += lost;
    } else if (stream.agent == result.uncongested_agent) {
      result.uncongested_rx_frames += rx;
      result.uncongested_lost_frames += lost;
    }
  }
  const auto ratio = [](std::uint64_t lost, std::uint64_t rx) {
    return lost + rx > 0 ? static_cast<double>(lost) / static_cast<double>(lost + rx) : 0.0;
  };
  result.congested_loss_ratio = ratio(result.congested_lost_frames, result.congested_rx_frames);
  result.uncongested_loss_ratio = ratio(result.uncongested_lost_frames, result.uncongested_rx_frames);
  result.head_of_line_blocking = result.uncongested_loss_ratio > allowed;
  return result;
}

}  // namespace tusk
