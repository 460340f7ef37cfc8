// The profile's `optics:` block: whether the agents read the optics and FEC counters of the ports a
// test uses (ethtool, as each test starts and ends), and what a port's readings are judged against
// (controller/verdict/optics_verdict.hpp). Plain data.
#pragma once

#include <chrono>
#include <optional>

namespace tusk {

// Each threshold optional: unset is not judged. A "max" or "min" is a failure past it, a "warn" a
// warning; the BER thresholds hold for each FEC lane where the driver counts lanes, else the port.
struct OpticsThresholds {
  std::optional<double> max_pre_fec_ber;
  std::optional<double> warn_pre_fec_ber;
  // Post-FEC symbol BER: judged on uncorrectable codewords per bit carried, each codeword taken as
  // one symbol error (a lower bound: an uncorrectable RS codeword holds more than t of them).
  std::optional<double> max_symbol_ber;
  std::optional<double> warn_symbol_ber;
  std::optional<double> min_rx_power_dbm;  // per optical lane
  std::optional<double> max_module_temp_c;
};

enum class OpticsPreset { none, field_ber };

struct OpticsSettings {
  bool read = true;  // read them at all; the module's own alarms and warnings are judged whenever read
  // Also read every this long while a test runs, each interval judged on its own (when a port began
  // to err); 0: as each test starts and ends only.
  std::chrono::milliseconds interval{60'000};
  OpticsPreset preset = OpticsPreset::none;
  // The profile's own thresholds; each one set replaces the preset's (optics_thresholds()).
  OpticsThresholds thresholds;
};

}  // namespace tusk
