#include "controller/verdict/optics_verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/optics_reading.hpp"

namespace tusk {
namespace {

// ---- FEC error rates --------------------------------------------------------------------------

constexpr std::uint64_t kMaxFecCount = std::numeric_limits<std::uint64_t>::max();

std::uint64_t saturating_product(std::uint64_t a, std::uint64_t b) {
  return a != 0 && b > kMaxFecCount / a ? kMaxFecCount : a * b;
}

std::uint64_t saturating_sum(std::uint64_t a, std::uint64_t b) {
  return b > kMaxFecCount - a ? kMaxFecCount : a + b;
}

// A counter's total (no slot) or one lane's value.
std::optional<std::uint64_t> fec_slot(const std::optional<std::uint64_t>& total,
                                      const std::vector<std::optional<std::uint64_t>>& lanes,
                                      std::optional<std::size_t> slot) {
  if (!slot) return total;
  return *slot < lanes.size() ? lanes[*slot] : std::nullopt;
}

// How one basis counts errors between two samples, slot by slot.
class FecErrorCount {
 public:
  FecErrorCount(const FecReading& before, const FecReading& after, FecRateBasis basis)
      : before_(before), after_(after), basis_(basis) {}

  // The errors in `slot` between the samples; none where either sample lacks it or it fell.
  std::optional<std::uint64_t> errors(std::optional<std::size_t> slot) {
    if (basis_ != FecRateBasis::histogram_symbols) return delta(counter(before_), counter(after_), slot);
    std::uint64_t sum = 0;
    for (std::size_t bin = 0; bin < after_.histogram.size(); ++bin) {
      const FecHistogramBin& old_bin = before_.histogram[bin];
      const FecHistogramBin& new_bin = after_.histogram[bin];
      const std::optional<std::uint64_t> codewords =
          difference(fec_slot(old_bin.total, old_bin.lanes, slot), fec_slot(new_bin.total, new_bin.lanes, slot));
      if (!codewords) return std::nullopt;
      sum = saturating_sum(sum, saturating_product(new_bin.low_symbols, *codewords));
    }
    return sum;
  }

  // The lanes both samples count (0 where they differ): a histogram's are its bins' fewest.
  std::size_t lanes() const {
    const std::size_t before = lane_count(before_);
    return before == lane_count(after_) ? before : 0;
  }

  bool went_back() const { return went_back_; }

 private:
  const FecCounter& counter(const FecReading& reading) const {
    return basis_ == FecRateBasis::corrected_bits     ? reading.corrected_bits
           : basis_ == FecRateBasis::corrected_blocks ? reading.corrected_blocks
                                                      : reading.uncorrectable_blocks;
  }

  std::size_t lane_count(const FecReading& reading) const {
    if (basis_ != FecRateBasis::histogram_symbols) return counter(reading).lanes.size();
    std::size_t fewest = reading.histogram.empty() ? 0 : kMaxOpticsLanes;
    for (const FecHistogramBin& bin : reading.histogram) fewest = std::min(fewest, bin.lanes.size());
    return fewest;
  }

  std::optional<std::uint64_t> delta(const FecCounter& old_counter, const FecCounter& new_counter,
                                     std::optional<std::size_t> slot) {
    return difference(fec_slot(old_counter.total, old_counter.lanes, slot),
                      fec_slot(new_counter.total, new_counter.lanes, slot));
  }

  std::optional<std::uint64_t> difference(std::optional<std::uint64_t> old_value,
                                          std::optional<std::uint64_t> new_value) {
    if (!old_value || !new_value) return std::nullopt;
    if (*new_value < *old_value) {
      went_back_ = true;
      return std::nullopt;
    }
    return *new_value - *old_value;
  }

  const FecReading& before_;
  const FecReading& after_;
  FecRateBasis basis_;
  bool went_back_ = false;
};

bool fec_counter_in_both(const FecCounter& before, const FecCounter& after) {
  return (before.total && after.total) || (!before.lanes.empty() && !after.lanes.empty());
}

bool fec_same_bins(const FecReading& before, const FecReading& after) {
  if (after.histogram.empty() || before.histogram.size() != after.histogram.size()) return false;
  for (std::size_t bin = 0; bin < after.histogram.size(); ++bin) {
    if (before.histogram[bin].low_symbols != after.histogram[bin].low_symbols ||
        before.histogram[bin].high_symbols != after.histogram[bin].high_symbols) {
      return false;
    }
  }
  return true;
}

// The best count of pre-FEC errors both samples allow: corrected bits, else the histogram, else blocks.
std::optional<FecRateBasis> pre_fec_basis(const FecReading& before, const FecReading& after) {
  if (fec_counter_in_both(before.corrected_bits, after.corrected_bits)) return FecRateBasis::corrected_bits;
  if (fec_same_bins(before, after)) return FecRateBasis::histogram_symbols;
  if (fec_counter_in_both(before.corrected_blocks, after.corrected_blocks)) return FecRateBasis::corrected_blocks;
  return std::nullopt;
}

std::optional<FecErrorRate> fec_rate(std::optional<std::uint64_t> errors, std::uint64_t bits, FecRateBasis basis,
                                     std::optional<std::uint32_t> lane) {
  if (!errors || bits == 0) return std::nullopt;
  return FecErrorRate{lane, *errors, bits, static_cast<double>(*errors) / static_cast<double>(bits), basis};
}

// ---- Findings ---------------------------------------------------------------------------------

// At most one finding per measure and lane: a later one replaces it only when more severe, so the
// profile's (offered first) wins a tie over the module's own thresholds, and those over its flags.
class OpticsFindingList {
 public:
  void offer(OpticsFinding finding) {
    for (OpticsFinding& existing : findings_) {
      if (existing.what != finding.what || existing.lane != finding.lane) continue;
      if (finding.severity == OpticsSeverity::failure && existing.severity == OpticsSeverity::warning) {
        existing = std::move(finding);
      }
      return;
    }
    findings_.push_back(std::move(finding));
  }
  std::vector<OpticsFinding> take() { return std::move(findings_); }

 private:
  std::vector<OpticsFinding> findings_;
};

// How a module quantity reads to a technician, and what to do past each side of its range.
struct OpticsQuantityWords {
  OpticsMeasure measure;
  std::string_view label;
  std::string_view advice_low;
  std::string_view advice_high;
};

OpticsQuantityWords quantity_words(ModuleQuantity quantity) {
  constexpr std::string_view kVoltageAdvice =
      "check the host port's power: move the optic to another port to tell a bad port from a bad optic";
  switch (quantity) {
    case ModuleQuantity::rx_power:
      return {OpticsMeasure::rx_power_dbm, "RX power",
              "clean the fibre ends at both ends and check the far end's TX power; if it stays low, replace the "
              "optic or the fibre",
              "the receiver is overloaded: add an attenuator, or use an optic meant for a link this short"};
    case ModuleQuantity::tx_power:
      return {OpticsMeasure::tx_power_dbm, "TX power", "the laser is weak: replace the optic at this end",
              "the laser is out of its range: replace the optic at this end"};
    case ModuleQuantity::tx_bias:
      return {OpticsMeasure::tx_bias_ma, "laser bias", "the laser may be failing: replace the optic at this end",
              "the laser is ageing: replace the optic at this end"};
    case ModuleQuantity::temperature:
      return {OpticsMeasure::temperature_c, "temperature", "the module is colder than it is rated for: check the room",
              "check the port's airflow and the fans; replace the optic if it runs hot in a cool cage"};
    case ModuleQuantity::voltage:
      break;
  }
  return {OpticsMeasure::voltage_v, "supply voltage", kVoltageAdvice, kVoltageAdvice};
}

bool is_power(ModuleQuantity quantity) {
  return quantity == ModuleQuantity::rx_power || quantity == ModuleQuantity::tx_power;
}

// A value in the quantity's native unit (mW for power) in the unit findings carry (dBm for power).
std::optional<double> finding_value(ModuleQuantity quantity, double native) {
  if (!is_power(quantity)) return native;
  if (native <= 0) return std::nullopt;
  return 10.0 * std::log10(native);
}

std::string native_text(ModuleQuantity quantity, double native) {
  switch (quantity) {
    case ModuleQuantity::rx_power:
    case ModuleQuantity::tx_power:
      return native > 0 ? fmt::format("{:.2f} dBm", 10.0 * std::log10(native)) : std::string("0 mW (no light)");
    case ModuleQuantity::tx_bias:
      return fmt::format("{:.2f} mA", native);
    case ModuleQuantity::temperature:
      return fmt::format("{:.1f} °C", native);
    case ModuleQuantity::voltage:
      break;
  }
  return fmt::format("{:.3f} V", native);
}

std::string where_text(std::optional<std::uint32_t> lane) {
  return lane ? fmt::format("lane {}", *lane) : std::string("module");
}

// One module check: a quantity's value on a lane (or the module), in its native unit.
struct ModuleValue {
  ModuleQuantity quantity;
  std::optional<std::uint32_t> lane;
  double native;
};

OpticsFinding module_finding(const std::string& port, const ModuleValue& value, double native_limit, bool low,
                             OpticsSeverity severity, OpticsLimitSource source, std::string_view limit_name) {
  const OpticsQuantityWords words = quantity_words(value.quantity);
  OpticsFinding finding;
  finding.port = port;
  finding.lane = value.lane;
  finding.what = words.measure;
  finding.measured = finding_value(value.quantity, value.native);
  finding.limit = finding_value(value.quantity, native_limit);
  finding.severity = severity;
  finding.limit_source = source;
  finding.text = fmt::format("{} {} {} {} {}{}: {}", where_text(value.lane), words.label,
                             native_text(value.quantity, value.native), low ? "below" : "above", limit_name,
                             native_text(value.quantity, native_limit), low ? words.advice_low : words.advice_high);
  return finding;
}

// The module's own thresholds: an alarm pair is used where high > low, a warning pair likewise
// (modules that implement none print zeros).
void judge_module_thresholds(OpticsFindingList& list, const std::string& port, const ModuleThresholdSet& set,
                             const ModuleValue& value) {
  const auto usable = [](const std::optional<double>& low, const std::optional<double>& high) {
    return low && high && *high > *low;
  };
  const double v = value.native;
  const bool alarms = usable(set.low_alarm, set.high_alarm);
  const bool warnings = usable(set.low_warning, set.high_warning);
  constexpr auto kFailure = OpticsSeverity::failure;
  constexpr auto kWarning = OpticsSeverity::warning;
  constexpr auto kModule = OpticsLimitSource::module_threshold;
  if (alarms && v > *set.high_alarm) {
    list.offer(module_finding(port, value, *set.high_alarm, false, kFailure, kModule, "the module's high alarm "));
  } else if (warnings && v > *set.high_warning) {
    list.offer(module_finding(port, value, *set.high_warning, false, kWarning, kModule, "the module's high warning "));
  }
  if (alarms && v < *set.low_alarm) {
    list.offer(module_finding(port, value, *set.low_alarm, true, kFailure, kModule, "the module's low alarm "));
  } else if (warnings && v < *set.low_warning) {
    list.offer(module_finding(port, value, *set.low_warning, true, kWarning, kModule, "the module's low warning "));
  }
}

// Every value the module reports, in its native unit.
std::vector<ModuleValue> module_values(const ModuleReading& module) {
  std::vector<ModuleValue> values;
  if (module.temperature_c) values.push_back({ModuleQuantity::temperature, std::nullopt, *module.temperature_c});
  if (module.supply_voltage_v) values.push_back({ModuleQuantity::voltage, std::nullopt, *module.supply_voltage_v});
  for (std::size_t i = 0; i < module.lanes.size() && i < kMaxOpticsLanes; ++i) {
    const OpticalLane& lane = module.lanes[i];
    const auto number = static_cast<std::uint32_t>(i + 1);
    // dBm as ethtool printed it where mW is missing; no light where both say so.
    std::optional<double> rx_mw = lane.rx_power_mw;
    if (!rx_mw && lane.rx_power_dbm) rx_mw = std::pow(10.0, *lane.rx_power_dbm / 10.0);
    std::optional<double> tx_mw = lane.tx_power_mw;
    if (!tx_mw && lane.tx_power_dbm) tx_mw = std::pow(10.0, *lane.tx_power_dbm / 10.0);
    if (rx_mw) values.push_back({ModuleQuantity::rx_power, number, *rx_mw});
    if (tx_mw) values.push_back({ModuleQuantity::tx_power, number, *tx_mw});
    if (lane.tx_bias_ma) values.push_back({ModuleQuantity::tx_bias, number, *lane.tx_bias_ma});
  }
  return values;
}

void judge_profile_limits(OpticsFindingList& list, const std::string& port, const ModuleValue& value,
                          const OpticsThresholds& thresholds) {
  if (value.quantity == ModuleQuantity::rx_power && thresholds.min_rx_power_dbm) {
    const double limit_mw = std::pow(10.0, *thresholds.min_rx_power_dbm / 10.0);
    if (value.native < limit_mw) {
      list.offer(module_finding(port, value, limit_mw, true, OpticsSeverity::failure, OpticsLimitSource::profile, ""));
    }
  }
  if (value.quantity == ModuleQuantity::temperature && thresholds.max_module_temp_c &&
      value.native > *thresholds.max_module_temp_c) {
    list.offer(module_finding(port, value, *thresholds.max_module_temp_c, false, OpticsSeverity::failure,
                              OpticsLimitSource::profile, ""));
  }
}

std::string_view module_limit_words(ModuleLimit limit) {
  switch (limit) {
    case ModuleLimit::high_alarm:
      return "high alarm";
    case ModuleLimit::low_alarm:
      return "low alarm";
    case ModuleLimit::high_warning:
      return "high warning";
    case ModuleLimit::low_warning:
      break;
  }
  return "low warning";
}

void judge_module_flags(OpticsFindingList& list, const std::string& port, const ModuleReading& module,
                        const std::vector<ModuleValue>& values) {
  for (const ModuleFlag& flag : module.flags_raised) {
    const OpticsQuantityWords words = quantity_words(flag.quantity);
    const bool low = flag.limit == ModuleLimit::low_alarm || flag.limit == ModuleLimit::low_warning;
    const bool alarm = flag.limit == ModuleLimit::high_alarm || flag.limit == ModuleLimit::low_alarm;
    OpticsFinding finding;
    finding.port = port;
    finding.lane = flag.lane;
    finding.what = words.measure;
    finding.severity = alarm ? OpticsSeverity::failure : OpticsSeverity::warning;
    finding.limit_source = OpticsLimitSource::module_flag;
    std::string now;
    for (const ModuleValue& value : values) {
      if (value.quantity != flag.quantity || value.lane != flag.lane) continue;
      finding.measured = finding_value(value.quantity, value.native);
      now = fmt::format("; now {}", native_text(value.quantity, value.native));
    }
    finding.text = fmt::format("{} {} {} flag raised by the module (latched{}): {}", where_text(flag.lane), words.label,
                               module_limit_words(flag.limit), now, low ? words.advice_low : words.advice_high);
    list.offer(std::move(finding));
  }
}

void judge_module(OpticsFindingList& list, const std::string& port, const ModuleReading& module,
                  const OpticsThresholds& thresholds) {
  if (module.status == ModuleStatus::unreadable) {
    OpticsFinding finding;
    finding.port = port;
    finding.what = OpticsMeasure::module_diagnostics;
    finding.text = fmt::format(
        "module diagnostics unreadable ({}): check that the module is seated and that "
        "`ethtool -m` reads it",
        module.note.empty() ? std::string("no reason given") : module.note);
    list.offer(std::move(finding));
    return;
  }
  if (module.status != ModuleStatus::diagnostics) return;
  const std::vector<ModuleValue> values = module_values(module);
  for (const ModuleValue& value : values) judge_profile_limits(list, port, value, thresholds);
  for (const ModuleValue& value : values) {
    judge_module_thresholds(list, port, thresholds_of(module.thresholds, value.quantity), value);
  }
  judge_module_flags(list, port, module, values);
}

// ---- FEC findings -----------------------------------------------------------------------------

std::string_view basis_words(FecRateBasis basis) {
  switch (basis) {
    case FecRateBasis::corrected_bits:
      return "";
    case FecRateBasis::histogram_symbols:
      return " (from the FEC error histogram, each symbol one bit)";
    case FecRateBasis::corrected_blocks:
      return " (from corrected codewords, each one bit)";
    case FecRateBasis::uncorrectable_blocks:
      break;
  }
  return " (from uncorrectable codewords, each one symbol)";
}

void judge_fec_rate(OpticsFindingList& list, const std::string& port, const FecErrorRate& rate, OpticsMeasure what,
                    std::optional<double> failure, std::optional<double> warning) {
  const bool fails = failure && rate.rate > *failure;
  const bool warns = !fails && warning && rate.rate > *warning;
  if (!fails && !warns) return;
  const double limit = fails ? *failure : *warning;
  const bool pre = what == OpticsMeasure::pre_fec_ber;
  OpticsFinding finding;
  finding.port = port;
  finding.lane = rate.fec_lane;
  finding.what = what;
  finding.measured = rate.rate;
  finding.limit = limit;
  finding.severity = fails ? OpticsSeverity::failure : OpticsSeverity::warning;
  finding.limit_source = OpticsLimitSource::profile;
  finding.text = fmt::format(
      "{} {} {}{:.1e}{} above {:.1e} ({} in {} bits): {}",
      rate.fec_lane ? fmt::format("FEC lane {}", *rate.fec_lane) : std::string("port"),
      pre ? "pre-FEC BER" : "post-FEC symbol BER", rate.lower_bound() ? "at least " : "", rate.rate,
      basis_words(rate.basis), limit, rate.errors, rate.bits,
      pre ? "clean and reseat the optics and fibre at both ends; if it persists, replace the optic or the cable"
          : "frames are being lost: clean and reseat both ends, then replace the optic or the cable");
  list.offer(std::move(finding));
}

void fec_not_judged(OpticsFindingList& list, const std::string& port, std::string_view why) {
  OpticsFinding finding;
  finding.port = port;
  finding.what = OpticsMeasure::fec_counters;
  finding.text = fmt::format("FEC BER not judged: {}", why);
  list.offer(std::move(finding));
}

void judge_fec(OpticsFindingList& list, const OpticsPortReadings& readings, const OpticsThresholds& thresholds,
               const FecErrorRates& rates) {
  const bool pre_judged = thresholds.max_pre_fec_ber || thresholds.warn_pre_fec_ber;
  const bool post_judged = thresholds.max_symbol_ber || thresholds.warn_symbol_ber;
  if (!pre_judged && !post_judged) return;
  // Thresholds asked for and nothing to judge them on is said alike whatever the reason: a NIC
  // without counters, or no reading at all (ethtool missing or timed out, the port's note says).
  if (!readings.fec_before || !readings.fec_after) {
    fec_not_judged(list, readings.port, "no FEC reading at both ends of the test");
    return;
  }
  for (const FecReading* sample : {&*readings.fec_before, &*readings.fec_after}) {
    if (sample->status != FecStatus::statistics) {
      fec_not_judged(list, readings.port, sample->note.empty() ? "the NIC reports no FEC counters" : sample->note);
      return;
    }
  }
  if (rates.counters_went_back) {
    fec_not_judged(list, readings.port, "the FEC counters fell between the samples (a reset or a driver reload)");
    return;
  }
  if (readings.bits_carried == 0) {
    fec_not_judged(list, readings.port, "no bits counted between the samples");
    return;
  }
  if (pre_judged) {
    for (const FecErrorRate& lane : rates.pre_fec_lanes) {
      judge_fec_rate(list, readings.port, lane, OpticsMeasure::pre_fec_ber, thresholds.max_pre_fec_ber,
                     thresholds.warn_pre_fec_ber);
    }
    if (rates.pre_fec_lanes.empty() && rates.pre_fec_port) {
      judge_fec_rate(list, readings.port, *rates.pre_fec_port, OpticsMeasure::pre_fec_ber, thresholds.max_pre_fec_ber,
                     thresholds.warn_pre_fec_ber);
    }
  }
  if (post_judged && rates.post_fec_port) {
    judge_fec_rate(list, readings.port, *rates.post_fec_port, OpticsMeasure::post_fec_symbol_ber,
                   thresholds.max_symbol_ber, thresholds.warn_symbol_ber);
  }
}

}  // namespace

OpticsThresholds field_ber_preset() {
  OpticsThresholds thresholds;
  thresholds.max_pre_fec_ber = kFieldBerPreFecError;
  thresholds.warn_pre_fec_ber = kFieldBerPreFecWarning;
  thresholds.max_symbol_ber = kFieldBerSymbolError;
  thresholds.warn_symbol_ber = kFieldBerSymbolWarning;
  return thresholds;
}

FecErrorRates fec_error_rates(const FecReading& before, const FecReading& after, std::uint64_t bits_carried) {
  FecErrorRates rates;
  if (before.status != FecStatus::statistics || after.status != FecStatus::statistics || bits_carried == 0) {
    return rates;
  }
  if (const std::optional<FecRateBasis> basis = pre_fec_basis(before, after)) {
    FecErrorCount count(before, after, *basis);
    rates.pre_fec_port = fec_rate(count.errors(std::nullopt), bits_carried, *basis, std::nullopt);
    const std::size_t lanes = count.lanes();
    for (std::size_t lane = 0; lane < lanes && lane < kMaxOpticsLanes; ++lane) {
      const std::optional<FecErrorRate> rate =
          fec_rate(count.errors(lane), bits_carried / lanes, *basis, static_cast<std::uint32_t>(lane));
      if (rate) rates.pre_fec_lanes.push_back(*rate);
    }
    rates.counters_went_back = count.went_back();
  }
  if (fec_counter_in_both(before.uncorrectable_blocks, after.uncorrectable_blocks)) {
    FecErrorCount count(before, after, FecRateBasis::uncorrectable_blocks);
    rates.post_fec_port =
        fec_rate(count.errors(std::nullopt), bits_carried, FecRateBasis::uncorrectable_blocks, std::nullopt);
    rates.counters_went_back = rates.counters_went_back || count.went_back();
  }
  if (rates.counters_went_back) {
    rates.pre_fec_lanes.clear();
    rates.pre_fec_port.reset();
    rates.post_fec_port.reset();
  }
  return rates;
}

bool OpticsVerdict::failed() const {
  for (const OpticsFinding& finding : findings) {
    if (finding.severity == OpticsSeverity::failure) return true;
  }
  return false;
}

OpticsVerdict judge_optics(const OpticsPortReadings& readings, const OpticsThresholds& thresholds) {
  OpticsVerdict verdict;
  OpticsFindingList list;
  if (readings.module) judge_module(list, readings.port, *readings.module, thresholds);
  if (readings.fec_before && readings.fec_after) {
    verdict.fec = fec_error_rates(*readings.fec_before, *readings.fec_after, readings.bits_carried);
  }
  judge_fec(list, readings, thresholds, verdict.fec);
  verdict.findings = list.take();
  return verdict;
}

std::string_view optics_measure_name(OpticsMeasure what) {
  switch (what) {
    case OpticsMeasure::rx_power_dbm:
      return "rx_power_dbm";
    case OpticsMeasure::tx_power_dbm:
      return "tx_power_dbm";
    case OpticsMeasure::tx_bias_ma:
      return "tx_bias_ma";
    case OpticsMeasure::temperature_c:
      return "temperature_c";
    case OpticsMeasure::voltage_v:
      return "voltage_v";
    case OpticsMeasure::pre_fec_ber:
      return "pre_fec_ber";
    case OpticsMeasure::post_fec_symbol_ber:
      return "post_fec_symbol_ber";
    case OpticsMeasure::fec_counters:
      return "fec_counters";
    case OpticsMeasure::module_diagnostics:
      break;
  }
  return "module_diagnostics";
}

}  // namespace tusk
