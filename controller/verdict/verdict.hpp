// Pass/fail per stream: derive metrics from a stream's final counters, then hold each against the
// test's thresholds. A threshold whose metric the stream should measure but did not fails: a
// burn-in that asked for a BER and got none must not pass quietly.
//
// Which stream kinds are judged on which metrics is each engine's to say (EngineSlice::stream_kinds
// in controller/engines/): a DPDK receiver ("rx") on everything, an RDMA sending QP ("flow") on
// throughput, completion errors, stalls and latency, and so on. A stream that names no kind is judged
// on everything; a kind no engine describes ("tx", "port") is informational: shown, not judged.
// A threshold that no stream of a test is judged on is a problem of the test (see unjudged_thresholds);
// a safe default that nothing measured is only a warning: it was not asked for.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/profile/profile.hpp"
#include "controller/verdict/ber_bound.hpp"
#include "controller/verdict/window_tally.hpp"
#include "tusk.pb.h"

namespace tusk {

// Metrics by name (see threshold_catalog): throughput_bps, ber, loss_ratio, and the counts.
std::map<std::string, double> compute_metrics(const proto::StreamCounters& stream, double duration_s);

struct ThresholdCheck {
  Threshold threshold;
  std::optional<double> measured;
  bool passed = false;
  // What the check's verdict says beside its numbers: why the measurement cannot judge the link
  // (loss on a receiver that dropped frames itself), or when its windows failed.
  std::string caveat;
  // Why a failed check is no verdict on any link: its flow votes for none.
  enum class NotTheLink : std::uint8_t { No, HostDrops, PeerLost };
  NotTheLink not_the_link = NotTheLink::No;
  // e.g. "ber 3.2e-09 > max 1e-12" or "ber not measured"
  std::string describe() const;
  // Passed, but the fault it judges happened: a relaxed safe default (max_flaps: 1 with one flap).
  bool tolerated_fault() const;
};

// What a stream's compared bits prove, worked out once for every report: the BER and its bound at
// the test's confidence, and how much longer the test must run to claim its target BER.
struct BerResult {
  BerEstimate estimate;
  double target = 0;
  double bits_needed_for_target = 0;
  // Without errors, how much longer an error-free run must go on. With errors none is said: more
  // time shows the target only if no more come, which the errors so far argue against; their
  // lower bound is what they show.
  std::optional<double> seconds_more_for_target;
};

struct StreamVerdict {
  std::string agent;
  // The schedule's step it ran in (1-based) when a test's steps are judged together; 0 otherwise.
  std::uint32_t step = 0;
  proto::StreamCounters stream;
  std::map<std::string, double> metrics;
  std::optional<BerResult> ber;  // streams that compare bits
  std::vector<ThresholdCheck> checks;
  // Its thresholds judged window by window (TestSpec::window); none without a window.
  // Shared, not held: most streams have none, and a schedule keeps millions of verdicts.
  std::shared_ptr<const WindowTally> windows;
  bool passed() const;
  // One line per tolerated fault, e.g. "link_flaps 1 (allowed: max_flaps 1)".
  std::vector<std::string> warnings() const;
};

// `stream` is moved into the verdict: a test's judgement keeps one copy of each stream's counters.
StreamVerdict judge_stream(const TestSpec& test, const std::string& agent, proto::StreamCounters stream,
                           double duration_s);
// Adds `windows` (closed) to `verdict`, and one failing check naming how many windows failed, the
// first and the worst, when any did.
void judge_windows(StreamVerdict& verdict, const WindowTally& windows);

// Whether streams of `kind` are judged on `metric`.
bool kind_judges(const std::string& kind, const std::string& metric);
// Streams judged on nothing at all ("tx", "port"): reports show them, junit leaves them out.
bool informational_kind(const std::string& kind);
// Streams of `kind` count what their peer sent (EngineSlice::stream_kinds' `receives`).
bool kind_receives(const std::string& kind);
// How a person names a stream: its traffic's direction first, as people name a link, then where it
// was measured: "lab-a -> lab-b (lab-b rx:lab-a/1)"; a stream with no peer (a port, a NIC) is
// "lab-a nic:mlx5_0/1".
std::string stream_title(const StreamVerdict& verdict);
// Streams of `kind` count one flow, not a port (EngineSlice::stream_kinds' `per_flow`); a stream
// that names no kind is taken for one.
bool kind_counts_a_flow(const std::string& kind);

// One line per threshold the profile set on `test` that none of `streams` was judged on.
std::vector<std::string> unjudged_thresholds(const TestSpec& test, const std::vector<StreamVerdict>& streams);
// One line per safe default of `test` that none of `streams` measured (nothing here reports it).
std::vector<std::string> unmeasured_defaults(const TestSpec& test, const std::vector<StreamVerdict>& streams);

// The allowed number of lost agents of `test` (its max_agents_lost, explicit or the safe default 0).
double agents_lost_allowed(const TestSpec& test);

}  // namespace tusk
