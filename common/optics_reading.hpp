// What a host NIC port's transceiver module and FEC counters say, as plain data: the agent fills it
// from ethtool's output (agent/optics/), the controller judges it (controller/verdict/optics_verdict)
// and neither includes the other. Every field a broken or hostile source could leave out is optional:
// absent means "not reported", never zero. The bounds below hold whatever the source printed.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tusk {

// The most lanes kept of a module (QSFP-DD and OSFP have 8; CMIS allows 4 banks of 8) and of a FEC
// counter; lanes past it are dropped and the reading says so (lanes_dropped).
inline constexpr std::size_t kMaxOpticsLanes = 16;
// The most bytes kept of a text field (vendor name, part and serial number, a note).
inline constexpr std::size_t kMaxOpticsTextBytes = 64;
// The most bins kept of a FEC error histogram (the kernel's ETHTOOL_FEC_HIST_MAX is well below it).
inline constexpr std::size_t kMaxFecHistogramBins = 64;
// The most FEC modes kept of a list ("Supported/Configured FEC encodings"); ethtool knows six.
inline constexpr std::size_t kMaxFecModes = 8;

// ---- Module diagnostics (ethtool -m) ------------------------------------------------------------

// Which memory map ethtool decoded, from the SFF-8024 identifier byte.
enum class ModuleSpec { unknown, sff8472, sff8636, cmis };

enum class ModuleStatus {
  diagnostics,     // the module reports monitors (at least one of temperature, lanes, flags, thresholds)
  no_diagnostics,  // a passive DAC, "Optical diagnostics support: No", or the driver cannot read modules
  unreadable,      // ethtool failed otherwise, or printed what this parser does not know; see note
};

// What a received power reading measures: average optical power, or optical modulation amplitude.
enum class RxPowerKind { unknown, average, oma };

// The monitored quantities that have alarm and warning thresholds and flags.
enum class ModuleQuantity { temperature, voltage, tx_bias, tx_power, rx_power };
enum class ModuleLimit { high_alarm, low_alarm, high_warning, low_warning };

// One quantity's alarm and warning thresholds as the module holds them, in the quantity's unit
// (°C, V, mA, mW).
struct ModuleThresholdSet {
  std::optional<double> high_alarm;
  std::optional<double> low_alarm;
  std::optional<double> high_warning;
  std::optional<double> low_warning;
};

struct ModuleThresholds {
  ModuleThresholdSet temperature_c;
  ModuleThresholdSet voltage_v;
  ModuleThresholdSet tx_bias_ma;
  ModuleThresholdSet tx_power_mw;
  ModuleThresholdSet rx_power_mw;
};

// The thresholds of one quantity, for the parser that fills them and the verdict that reads them.
inline const ModuleThresholdSet& thresholds_of(const ModuleThresholds& thresholds, ModuleQuantity quantity) {
  switch (quantity) {
    case ModuleQuantity::temperature:
      return thresholds.temperature_c;
    case ModuleQuantity::voltage:
      return thresholds.voltage_v;
    case ModuleQuantity::tx_bias:
      return thresholds.tx_bias_ma;
    case ModuleQuantity::tx_power:
      return thresholds.tx_power_mw;
    case ModuleQuantity::rx_power:
      break;
  }
  return thresholds.rx_power_mw;
}
inline ModuleThresholdSet& thresholds_of(ModuleThresholds& thresholds, ModuleQuantity quantity) {
  return const_cast<ModuleThresholdSet&>(thresholds_of(std::as_const(thresholds), quantity));
}

// A flag the module reports raised. SFF-8472 and SFF-8636 flags are latched: raised since the last
// read, not necessarily still true.
struct ModuleFlag {
  ModuleQuantity quantity = ModuleQuantity::temperature;
  ModuleLimit limit = ModuleLimit::high_alarm;
  std::optional<std::uint32_t> lane;  // the channel from 1, as ethtool numbers them; none for the module
};

struct OpticalLane {
  std::optional<double> tx_bias_ma;
  std::optional<double> tx_power_mw;
  std::optional<double> tx_power_dbm;
  std::optional<double> rx_power_mw;
  std::optional<double> rx_power_dbm;
};

// A power in dBm from mW; none for no light (0 mW, whose log is -inf) or no reading.
inline std::optional<double> dbm_of_mw(std::optional<double> mw) {
  if (!mw || *mw <= 0) return std::nullopt;
  return 10.0 * std::log10(*mw);
}

struct ModuleReading {
  ModuleStatus status = ModuleStatus::unreadable;
  std::string note;  // why there are no diagnostics, or what ethtool said instead
  ModuleSpec spec = ModuleSpec::unknown;
  std::optional<std::uint32_t> identifier;  // SFF-8024 byte 0: 0x03 SFP, 0x11 QSFP28, 0x18 QSFP-DD, ...
  std::string identifier_text;              // ethtool's name for it: "SFP", "QSFP28", ...
  std::string vendor_name;
  std::string part_number;
  std::string serial_number;
  std::optional<double> temperature_c;
  std::optional<double> supply_voltage_v;
  RxPowerKind rx_power_kind = RxPowerKind::unknown;
  std::vector<OpticalLane> lanes;  // lanes[0] is channel 1; at most kMaxOpticsLanes
  bool lanes_dropped = false;      // the source printed lanes past kMaxOpticsLanes
  ModuleThresholds thresholds;
  std::optional<bool> flags_implemented;
  std::vector<ModuleFlag> flags_raised;
  // ethtool (6.1, and the JSON versions of 2025 alike) reads a CMIS module's lane flags as
  // `byte & lane index` rather than the lane's own bit, so channel 1's are always off and the others
  // name the wrong lanes. A CMIS reading keeps its module-level flags and drops its lane flags
  // (this is then true); its lanes are still judged against its thresholds.
  bool lane_flags_ignored = false;
};

// ---- FEC (ethtool --include-statistics --show-fec) ---------------------------------------------

enum class FecMode { none, off, auto_select, baser, rs, llrs, other };

enum class FecStatus {
  statistics,     // a Statistics section with at least one counter
  no_statistics,  // FEC settings without counters, or the driver supports neither
  unreadable,     // ethtool failed otherwise, or printed what this parser does not know; see note
};

// One counter: the port's total and, where the driver counts them, each FEC lane's (ethtool numbers
// FEC lanes from 0; lanes[0] is lane 0). A lane whose value did not read is absent.
struct FecCounter {
  std::optional<std::uint64_t> total;
  std::vector<std::optional<std::uint64_t>> lanes;
};

// One bin of the FEC error histogram (IEEE 802.3ck/df; kernel 6.18): codewords with between
// low and high symbol errors, both inclusive.
struct FecHistogramBin {
  std::uint32_t low_symbols = 0;
  std::uint32_t high_symbols = 0;
  std::optional<std::uint64_t> total;
  std::vector<std::optional<std::uint64_t>> lanes;
};

struct FecReading {
  FecStatus status = FecStatus::unreadable;
  std::string note;
  std::vector<FecMode> configured;  // "Supported/Configured FEC encodings"
  std::optional<FecMode> active;
  FecCounter corrected_blocks;      // codewords the FEC corrected
  FecCounter uncorrectable_blocks;  // codewords it could not
  FecCounter corrected_bits;        // bits it corrected (few drivers count them)
  std::vector<FecHistogramBin> histogram;
  bool lanes_dropped = false;  // lanes past kMaxOpticsLanes or bins past kMaxFecHistogramBins
};

}  // namespace tusk
