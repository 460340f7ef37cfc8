// Pass/fail per stream: derive metrics from a stream's final counters, then hold each against the
// test's thresholds. A threshold whose metric the stream should measure but did not fails: a
// burn-in that asked for a BER and got none must not pass quietly.
//
// Stream kinds and what they are judged on:
//   "rx"   DPDK receiver (and a stream that names no kind): every threshold.
//   "tx"   DPDK sender: nothing (its receiver's stream is judged).
//   "flow" RDMA sender QP: throughput, completion errors, latency.
//   "sink" RDMA receiver QP: throughput, integrity errors, completion errors.
//   "read" RDMA READ initiator QP (it receives and checks the data): throughput, integrity and
//          completion errors, latency.
//   "source" RDMA READ target QP: completion errors.
//   "nic"  an RDMA port's own counters: retransmits, link flaps.
//   "port" a DPDK port's extended statistics: nothing (informational, like "tx").
// A threshold that no stream of a test is judged on is a problem of the test (see unjudged_thresholds).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/profile.hpp"
#include "tusk.pb.h"

namespace tusk {

// Metrics by name (see threshold_catalog): throughput_bps, ber, loss_ratio, and the counts.
std::map<std::string, double> compute_metrics(const proto::StreamCounters& stream, double duration_s);

struct ThresholdCheck {
  Threshold threshold;
  std::optional<double> measured;
  bool passed = false;
  // Why the measurement cannot judge the link, e.g. loss on a receiver that dropped frames itself.
  std::string caveat;
  // e.g. "ber 3.2e-09 > max 1e-12" or "ber not measured"
  std::string describe() const;
};

struct StreamVerdict {
  std::string agent;
  proto::StreamCounters stream;
  std::map<std::string, double> metrics;
  std::vector<ThresholdCheck> checks;
  bool passed() const;
};

StreamVerdict judge_stream(const TestSpec& test, const std::string& agent, const proto::StreamCounters& stream,
                           double duration_s);

// Whether streams of `kind` are judged on `metric`.
bool kind_judges(const std::string& kind, const std::string& metric);
// Streams judged on nothing at all ("tx", "port"): reports show them, junit leaves them out.
bool informational_kind(const std::string& kind);

// One line per threshold of `test` that none of `streams` was judged on.
std::vector<std::string> unjudged_thresholds(const TestSpec& test, const std::vector<StreamVerdict>& streams);

}  // namespace tusk
