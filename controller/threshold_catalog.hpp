// Every pass/fail rule a profile may set under `thresholds:`, the metric each one judges, and the
// engines that produce that metric. The loader validates keys against this table and the verdict
// reads the metric names from it, so adding a threshold is one entry here.
#pragma once

#include <string_view>
#include <vector>

#include "controller/profile.hpp"

namespace tusk {

struct ThresholdKind {
  // How the value is written in the profile and stored in Threshold::value.
  enum class Value {
    Ratio,     // parse_ratio: 1e-12, 0.1%
    Count,     // parse_count: 0, 1000, 1e6
    BitRate,   // parse_bit_rate, stored in bits per second
    Duration,  // parse_duration, stored in nanoseconds
  };

  std::string_view key;     // as written under thresholds:
  std::string_view metric;  // the metric the verdict computes
  Bound bound = Bound::Max;
  Value value = Value::Count;
  std::vector<std::string_view> engines;  // engines that report the metric
  std::string_view help;                  // one line for docs and `tusk-controller` help
};

const std::vector<ThresholdKind>& threshold_catalog();

// nullptr for an unknown key.
const ThresholdKind* find_threshold(std::string_view key);

}  // namespace tusk
