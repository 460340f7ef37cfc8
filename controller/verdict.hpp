// Pass/fail per stream: derive metrics from a stream's final counters, then hold each against the
// test's thresholds. A threshold whose metric the stream cannot measure fails: a burn-in that
// asked for a BER and got none must not pass quietly.
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

}  // namespace tusk
