// The keys of a profile's top level, of its `agents:` and of its `safety:`: what the loader
// accepts there, and what docs/profile.md must document (tests/controller/profile/profile_reference_test.cpp).
// A test's own keys are the schema's rows (profile_schema::test_key_names).
#pragma once

#include <string_view>
#include <vector>

namespace tusk::profile_keys {

inline const std::vector<std::string_view>& top_level() {
  static const std::vector<std::string_view> keys{"name",          "description", "agents",   "safety",
                                                  "cabling",       "optics",      "actions",  "baseline",
                                                  "baseline_fail", "series",      "defaults", "tests"};
  return keys;
}

inline const std::vector<std::string_view>& agents() {
  static const std::vector<std::string_view> keys{"hosts", "patterns", "count", "wait"};
  return keys;
}

inline const std::vector<std::string_view>& safety() {
  static const std::vector<std::string_view> keys{"max_rate", "max_duration"};
  return keys;
}

inline const std::vector<std::string_view>& actions() {
  static const std::vector<std::string_view> keys{"slurm",        "kubernetes", "exec",
                                                  "exec_timeout", "max_share",  "dry_run"};
  return keys;
}

inline const std::vector<std::string_view>& series() {
  static const std::vector<std::string_view> keys{"full", "margin", "budget"};
  return keys;
}

inline const std::vector<std::string_view>& optics() {
  static const std::vector<std::string_view> keys{
      "read",           "interval",        "preset",           "max_pre_fec_ber",  "warn_pre_fec_ber",
      "max_symbol_ber", "warn_symbol_ber", "min_rx_power_dbm", "max_module_temp_c"};
  return keys;
}

}  // namespace tusk::profile_keys
