#include "common/optics_wire.hpp"

#include <algorithm>
#include <bitset>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/printable.hpp"

namespace tusk {
namespace {

// An enum carried as uint32: a value past `last` (a newer or hostile peer) reads as `fallback`.
template <typename Enum>
Enum enum_from_wire(std::uint32_t value, Enum last, Enum fallback) {
  return value <= static_cast<std::uint32_t>(last) ? static_cast<Enum>(value) : fallback;
}

std::optional<double> finite_from_wire(bool present, double value) {
  if (!present || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::string text_from_wire(const std::string& text) {
  return bounded_ascii(text, kMaxOpticsTextBytes);
}

void thresholds_to_wire(const ModuleThresholdSet& set, proto::ModuleThresholdSet& out) {
  if (set.high_alarm) out.set_high_alarm(*set.high_alarm);
  if (set.low_alarm) out.set_low_alarm(*set.low_alarm);
  if (set.high_warning) out.set_high_warning(*set.high_warning);
  if (set.low_warning) out.set_low_warning(*set.low_warning);
}

ModuleThresholdSet thresholds_from_wire(const proto::ModuleThresholdSet& message) {
  ModuleThresholdSet set;
  set.high_alarm = finite_from_wire(message.has_high_alarm(), message.high_alarm());
  set.low_alarm = finite_from_wire(message.has_low_alarm(), message.low_alarm());
  set.high_warning = finite_from_wire(message.has_high_warning(), message.high_warning());
  set.low_warning = finite_from_wire(message.has_low_warning(), message.low_warning());
  return set;
}

void lane_to_wire(const OpticalLane& lane, proto::OpticalLane& out) {
  if (lane.tx_bias_ma) out.set_tx_bias_ma(*lane.tx_bias_ma);
  if (lane.tx_power_mw) out.set_tx_power_mw(*lane.tx_power_mw);
  if (lane.tx_power_dbm) out.set_tx_power_dbm(*lane.tx_power_dbm);
  if (lane.rx_power_mw) out.set_rx_power_mw(*lane.rx_power_mw);
  if (lane.rx_power_dbm) out.set_rx_power_dbm(*lane.rx_power_dbm);
}

OpticalLane lane_from_wire(const proto::OpticalLane& message) {
  OpticalLane lane;
  lane.tx_bias_ma = finite_from_wire(message.has_tx_bias_ma(), message.tx_bias_ma());
  lane.tx_power_mw = finite_from_wire(message.has_tx_power_mw(), message.tx_power_mw());
  lane.tx_power_dbm = finite_from_wire(message.has_tx_power_dbm(), message.tx_power_dbm());
  lane.rx_power_mw = finite_from_wire(message.has_rx_power_mw(), message.rx_power_mw());
  lane.rx_power_dbm = finite_from_wire(message.has_rx_power_dbm(), message.rx_power_dbm());
  return lane;
}

// As the parser raises them: each (quantity, limit, lane) once, so at most kMaxModuleFlags.
void flags_from_wire(const proto::ModuleDiagnostics& message, ModuleReading& reading) {
  constexpr auto kLastQuantity = static_cast<std::uint32_t>(ModuleQuantity::rx_power);
  constexpr auto kLastLimit = static_cast<std::uint32_t>(ModuleLimit::low_warning);
  std::bitset<kMaxModuleFlags> seen;
  for (const proto::ModuleFlag& flag : message.flags_raised()) {
    if (flag.quantity() > kLastQuantity || flag.limit() > kLastLimit) continue;
    if (flag.has_lane() && flag.lane() > kMaxOpticsLanes) {
      reading.lanes_dropped = true;
      continue;
    }
    if (flag.has_lane() && flag.lane() == 0) continue;
    const std::uint32_t lane = flag.has_lane() ? flag.lane() : 0;
    const std::size_t slot = (flag.quantity() * (kLastLimit + 1) + flag.limit()) * (kMaxOpticsLanes + 1) + lane;
    if (seen.test(slot)) continue;
    seen.set(slot);
    reading.flags_raised.push_back(ModuleFlag{static_cast<ModuleQuantity>(flag.quantity()),
                                              static_cast<ModuleLimit>(flag.limit()),
                                              flag.has_lane() ? std::optional<std::uint32_t>(lane) : std::nullopt});
  }
}

using WireFecLanes = google::protobuf::RepeatedPtrField<proto::FecLaneCount>;

void fec_lanes_to_wire(const std::vector<std::optional<std::uint64_t>>& lanes, WireFecLanes& out) {
  for (const std::optional<std::uint64_t>& lane : lanes) {
    proto::FecLaneCount& count = *out.Add();
    count.set_has_value(lane.has_value());
    if (lane) count.set_value(*lane);
  }
}

std::vector<std::optional<std::uint64_t>> fec_lanes_from_wire(const WireFecLanes& lanes, bool& dropped) {
  if (static_cast<std::size_t>(lanes.size()) > kMaxOpticsLanes) dropped = true;
  const auto kept = std::min(static_cast<std::size_t>(lanes.size()), kMaxOpticsLanes);
  std::vector<std::optional<std::uint64_t>> out;
  out.reserve(kept);
  for (std::size_t i = 0; i < kept; ++i) {
    const proto::FecLaneCount& lane = lanes.Get(static_cast<int>(i));
    out.push_back(lane.has_value() ? std::optional<std::uint64_t>(lane.value()) : std::nullopt);
  }
  return out;
}

void fec_counter_to_wire(const FecCounter& counter, proto::FecCounter& out) {
  if (counter.total) out.set_total(*counter.total);
  fec_lanes_to_wire(counter.lanes, *out.mutable_lanes());
}

FecCounter fec_counter_from_wire(const proto::FecCounter& message, bool& dropped) {
  FecCounter counter;
  if (message.has_total()) counter.total = message.total();
  counter.lanes = fec_lanes_from_wire(message.lanes(), dropped);
  return counter;
}

FecMode fec_mode_from_wire(std::uint32_t value) {
  return enum_from_wire(value, FecMode::other, FecMode::other);
}

}  // namespace

void to_proto(const ModuleReading& reading, proto::ModuleDiagnostics& out) {
  out.Clear();
  out.set_status(static_cast<std::uint32_t>(reading.status));
  out.set_note(reading.note);
  out.set_spec(static_cast<std::uint32_t>(reading.spec));
  if (reading.identifier) out.set_identifier(*reading.identifier);
  out.set_identifier_text(reading.identifier_text);
  out.set_vendor_name(reading.vendor_name);
  out.set_part_number(reading.part_number);
  out.set_serial_number(reading.serial_number);
  if (reading.temperature_c) out.set_temperature_c(*reading.temperature_c);
  if (reading.supply_voltage_v) out.set_supply_voltage_v(*reading.supply_voltage_v);
  out.set_rx_power_kind(static_cast<std::uint32_t>(reading.rx_power_kind));
  for (const OpticalLane& lane : reading.lanes) lane_to_wire(lane, *out.add_lanes());
  out.set_lanes_dropped(reading.lanes_dropped);
  thresholds_to_wire(reading.thresholds.temperature_c, *out.mutable_temperature_c_thresholds());
  thresholds_to_wire(reading.thresholds.voltage_v, *out.mutable_voltage_v_thresholds());
  thresholds_to_wire(reading.thresholds.tx_bias_ma, *out.mutable_tx_bias_ma_thresholds());
  thresholds_to_wire(reading.thresholds.tx_power_mw, *out.mutable_tx_power_mw_thresholds());
  thresholds_to_wire(reading.thresholds.rx_power_mw, *out.mutable_rx_power_mw_thresholds());
  if (reading.flags_implemented) out.set_flags_implemented(*reading.flags_implemented);
  for (const ModuleFlag& flag : reading.flags_raised) {
    proto::ModuleFlag& wire = *out.add_flags_raised();
    wire.set_quantity(static_cast<std::uint32_t>(flag.quantity));
    wire.set_limit(static_cast<std::uint32_t>(flag.limit));
    if (flag.lane) wire.set_lane(*flag.lane);
  }
  out.set_lane_flags_ignored(reading.lane_flags_ignored);
}

void to_proto(const FecReading& reading, proto::FecStats& out) {
  out.Clear();
  out.set_status(static_cast<std::uint32_t>(reading.status));
  out.set_note(reading.note);
  for (const FecMode mode : reading.configured) out.add_configured(static_cast<std::uint32_t>(mode));
  if (reading.active) out.set_active(static_cast<std::uint32_t>(*reading.active));
  fec_counter_to_wire(reading.corrected_blocks, *out.mutable_corrected_blocks());
  fec_counter_to_wire(reading.uncorrectable_blocks, *out.mutable_uncorrectable_blocks());
  fec_counter_to_wire(reading.corrected_bits, *out.mutable_corrected_bits());
  for (const FecHistogramBin& bin : reading.histogram) {
    proto::FecHistogramBin& wire = *out.add_histogram();
    wire.set_low_symbols(bin.low_symbols);
    wire.set_high_symbols(bin.high_symbols);
    if (bin.total) wire.set_total(*bin.total);
    fec_lanes_to_wire(bin.lanes, *wire.mutable_lanes());
  }
  out.set_lanes_dropped(reading.lanes_dropped);
}

ModuleReading module_from_proto(const proto::ModuleDiagnostics& message) {
  ModuleReading reading;
  reading.status = enum_from_wire(message.status(), ModuleStatus::unreadable, ModuleStatus::unreadable);
  reading.note = text_from_wire(message.note());
  reading.spec = enum_from_wire(message.spec(), ModuleSpec::cmis, ModuleSpec::unknown);
  if (message.has_identifier() && message.identifier() <= 0xFF) reading.identifier = message.identifier();
  reading.identifier_text = text_from_wire(message.identifier_text());
  reading.vendor_name = text_from_wire(message.vendor_name());
  reading.part_number = text_from_wire(message.part_number());
  reading.serial_number = text_from_wire(message.serial_number());
  reading.temperature_c = finite_from_wire(message.has_temperature_c(), message.temperature_c());
  reading.supply_voltage_v = finite_from_wire(message.has_supply_voltage_v(), message.supply_voltage_v());
  reading.rx_power_kind = enum_from_wire(message.rx_power_kind(), RxPowerKind::oma, RxPowerKind::unknown);
  const auto lanes = static_cast<std::size_t>(message.lanes_size());
  reading.lanes_dropped = message.lanes_dropped() || lanes > kMaxOpticsLanes;
  reading.lanes.reserve(std::min(lanes, kMaxOpticsLanes));
  for (std::size_t i = 0; i < lanes && i < kMaxOpticsLanes; ++i) {
    reading.lanes.push_back(lane_from_wire(message.lanes(static_cast<int>(i))));
  }
  reading.thresholds.temperature_c = thresholds_from_wire(message.temperature_c_thresholds());
  reading.thresholds.voltage_v = thresholds_from_wire(message.voltage_v_thresholds());
  reading.thresholds.tx_bias_ma = thresholds_from_wire(message.tx_bias_ma_thresholds());
  reading.thresholds.tx_power_mw = thresholds_from_wire(message.tx_power_mw_thresholds());
  reading.thresholds.rx_power_mw = thresholds_from_wire(message.rx_power_mw_thresholds());
  if (message.has_flags_implemented()) reading.flags_implemented = message.flags_implemented();
  flags_from_wire(message, reading);
  reading.lane_flags_ignored = message.lane_flags_ignored();
  return reading;
}

FecReading fec_from_proto(const proto::FecStats& message) {
  FecReading reading;
  reading.status = enum_from_wire(message.status(), FecStatus::unreadable, FecStatus::unreadable);
  reading.note = text_from_wire(message.note());
  for (int i = 0; i < message.configured_size() && reading.configured.size() < kMaxFecModes; ++i) {
    reading.configured.push_back(fec_mode_from_wire(message.configured(i)));
  }
  if (message.has_active()) reading.active = fec_mode_from_wire(message.active());
  reading.lanes_dropped = message.lanes_dropped();
  reading.corrected_blocks = fec_counter_from_wire(message.corrected_blocks(), reading.lanes_dropped);
  reading.uncorrectable_blocks = fec_counter_from_wire(message.uncorrectable_blocks(), reading.lanes_dropped);
  reading.corrected_bits = fec_counter_from_wire(message.corrected_bits(), reading.lanes_dropped);
  const auto bins = static_cast<std::size_t>(message.histogram_size());
  if (bins > kMaxFecHistogramBins) reading.lanes_dropped = true;
  reading.histogram.reserve(std::min(bins, kMaxFecHistogramBins));
  for (std::size_t i = 0; i < bins && i < kMaxFecHistogramBins; ++i) {
    const proto::FecHistogramBin& wire = message.histogram(static_cast<int>(i));
    FecHistogramBin bin;
    bin.low_symbols = wire.low_symbols();
    bin.high_symbols = wire.high_symbols();
    if (wire.has_total()) bin.total = wire.total();
    bin.lanes = fec_lanes_from_wire(wire.lanes(), reading.lanes_dropped);
    reading.histogram.push_back(std::move(bin));
  }
  return reading;
}

}  // namespace tusk
