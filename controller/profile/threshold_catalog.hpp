// Every pass/fail rule a profile may set under `thresholds:` and the metric each one judges. Which
// engines measure it is each engine's to say (EngineSlice::thresholds). The loader validates keys
// against this table and the verdict reads the metric names from it.
//
// Safe defaults: a fault that must never read as a pass (a link that went down, a stalled flow,
// a corrupted message, a lost agent) is judged at zero in every test of an engine that measures it,
// unless the profile sets a threshold on the same fault: the entry's own key or one of `relaxed_by`
// (`max_ber: 1e-12` says how many bit errors the user accepts, so it relaxes `max_bit_errors`).
#pragma once

#include <string_view>
#include <vector>

#include "controller/profile/profile.hpp"

namespace tusk {

struct ThresholdKind {
  // How the value is written in the profile and stored in Threshold::value.
  enum class Value {
    Ratio,     // parse_ratio: 1e-12, 0.1%
    Count,     // parse_count: 0, 1000, 1e6
    BitRate,   // parse_bit_rate, stored in bits per second
    Duration,  // parse_duration, stored in nanoseconds
  };
  // What the metric belongs to: one stream's counters, or the test as a whole (agents lost).
  enum class Scope { Stream, Test };

  std::string_view key;     // as written under thresholds:
  std::string_view metric;  // the metric the verdict computes
  Bound bound = Bound::Max;
  Value value = Value::Count;
  std::string_view help;                          // one line for docs and `tusk-controller` help
  bool safe_default = false;                      // judged at 0 unless the profile relaxes it
  std::vector<std::string_view> relaxed_by = {};  // other keys that set the accepted amount of this fault
  Scope scope = Scope::Stream;
};

const std::vector<ThresholdKind>& threshold_catalog();

// nullptr for an unknown key.
const ThresholdKind* find_threshold(std::string_view key);

// The safe defaults that apply to a test of `engine` whose profile set `thresholds`: one Threshold
// (value 0, implicit) per default fault the profile did not relax, positioned at `pos`.
std::vector<Threshold> safe_default_thresholds(std::string_view engine, const std::vector<Threshold>& thresholds,
                                               const SourcePos& pos);

}  // namespace tusk
