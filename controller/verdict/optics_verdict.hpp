// One host port's optics judged: its transceiver module's readings against a profile's thresholds
// and the module's own alarm and warning thresholds and flags, and its pre-FEC BER (from two FEC
// samples and the bits carried between them) against the BER thresholds. Each finding names the port,
// the lane, what was measured against what limit, and says in a line what a technician does next.
// Pure functions of plain data (common/optics_reading.hpp); any thread may call them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/optics_reading.hpp"
#include "controller/profile/optics_settings.hpp"

namespace tusk {

// `preset: field-ber`: the field thresholds NVIDIA publishes for optical links with FEC, as this
// preset was specified with them (NVIDIA's networking documentation is the reference to check them
// against). The "normal" levels are what a healthy link stays under; they are not judged.
inline constexpr double kFieldBerPreFecNormal = 1e-6;
inline constexpr double kFieldBerPreFecWarning = 5e-6;
inline constexpr double kFieldBerPreFecError = 1e-5;
inline constexpr double kFieldBerSymbolNormal = 1e-15;
inline constexpr double kFieldBerSymbolWarning = 5e-15;
inline constexpr double kFieldBerSymbolError = 1e-14;
inline constexpr std::string_view kFieldBerSource =
    "NVIDIA published field thresholds for optical links: pre-FEC BER 1e-6 normal, 5e-6 warning, 1e-5 error; "
    "symbol BER 1e-15 normal, 5e-15 warning, 1e-14 error";

// The preset's thresholds: the warning and error levels above, nothing for RX power or temperature.
OpticsThresholds field_ber_preset();

// ---- Error rates from two FEC samples ----------------------------------------------------------

enum class FecRateBasis {
  corrected_bits,        // the driver's count of corrected bits: a measurement
  histogram_symbols,     // the error histogram, each symbol one bit, each bin at its low end: at least
  corrected_blocks,      // corrected codewords, each one bit: at least
  uncorrectable_blocks,  // uncorrectable codewords, each one symbol (post-FEC): at least
};

struct FecErrorRate {
  std::optional<std::uint32_t> fec_lane;  // ethtool's lane number (from 0); none for the port's total
  std::uint64_t errors = 0;               // counted, or the least the counters allow
  std::uint64_t bits = 0;                 // the port's bits carried, or a lane's share of them
  double rate = 0;                        // errors / bits
  FecRateBasis basis = FecRateBasis::corrected_bits;
  bool lower_bound() const { return basis != FecRateBasis::corrected_bits; }
};

struct FecErrorRates {
  std::vector<FecErrorRate> pre_fec_lanes;  // where both samples count the same lanes
  std::optional<FecErrorRate> pre_fec_port;
  std::optional<FecErrorRate> post_fec_port;
  bool counters_went_back = false;  // a counter fell between the samples (a reset): nothing is rated
};

// Error rates between two samples of one port. `bits_carried` is the port's bits over the interval,
// all lanes together, shared evenly among the FEC lanes (PCS striping spreads them so). The line
// carries idles too: line rate × interval is the true count; rx octets × 8 counts fewer bits on a
// lightly loaded link and so overstates the BER, which errs on the safe side. Nothing is rated
// without bits, or without statistics in both samples.
FecErrorRates fec_error_rates(const FecReading& before, const FecReading& after, std::uint64_t bits_carried);

// ---- Findings -----------------------------------------------------------------------------------

enum class OpticsSeverity { warning, failure };

enum class OpticsMeasure {
  rx_power_dbm,
  tx_power_dbm,
  tx_bias_ma,
  temperature_c,
  voltage_v,
  pre_fec_ber,
  post_fec_symbol_ber,
  fec_counters,        // the FEC samples could not be compared
  module_diagnostics,  // the module could not be read
};

enum class OpticsLimitSource { profile, module_threshold, module_flag, none };

struct OpticsFinding {
  std::string port;
  // The optical channel (from 1) for a module's lane, the FEC lane (from 0) for a BER; none for the
  // module or the port as a whole.
  std::optional<std::uint32_t> lane;
  OpticsMeasure what = OpticsMeasure::module_diagnostics;
  std::optional<double> measured;  // in the measure's unit; none where there is no number (no light)
  std::optional<double> limit;
  OpticsSeverity severity = OpticsSeverity::warning;
  OpticsLimitSource limit_source = OpticsLimitSource::none;
  std::string text;  // one line for a technician: what, how far off, what to do
};

// What one port's judge needs. `module` is absent where it was not read; the FEC samples are the
// start and end of the interval `bits_carried` was counted over.
struct OpticsPortReadings {
  std::string port;
  std::optional<ModuleReading> module;
  std::optional<FecReading> fec_before;
  std::optional<FecReading> fec_after;
  std::uint64_t bits_carried = 0;
};

struct OpticsVerdict {
  std::vector<OpticsFinding> findings;  // at most one per measure and lane: the most severe
  FecErrorRates fec;
  bool failed() const;
};

OpticsVerdict judge_optics(const OpticsPortReadings& readings, const OpticsThresholds& thresholds);

// "rx_power_dbm", "pre_fec_ber", ...: the measure's name for reports.
std::string_view optics_measure_name(OpticsMeasure what);

}  // namespace tusk
