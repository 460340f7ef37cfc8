// A port's module and FEC readings carried from agent to controller: what the agent read arrives as
// it was, and whatever a hostile peer sends is bounded as the ethtool parsers bound their input.
#include "common/optics_wire.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/optics_reading.hpp"

namespace tusk {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Through the bytes a peer would send, not just the message object.
ModuleReading module_over_wire(const ModuleReading& reading) {
  proto::ModuleDiagnostics sent;
  to_proto(reading, sent);
  proto::ModuleDiagnostics received;
  EXPECT_TRUE(received.ParseFromString(sent.SerializeAsString()));
  return module_from_proto(received);
}

FecReading fec_over_wire(const FecReading& reading) {
  proto::FecStats sent;
  to_proto(reading, sent);
  proto::FecStats received;
  EXPECT_TRUE(received.ParseFromString(sent.SerializeAsString()));
  return fec_from_proto(received);
}

void expect_same_thresholds(const ModuleThresholdSet& got, const ModuleThresholdSet& want) {
  EXPECT_EQ(got.high_alarm, want.high_alarm);
  EXPECT_EQ(got.low_alarm, want.low_alarm);
  EXPECT_EQ(got.high_warning, want.high_warning);
  EXPECT_EQ(got.low_warning, want.low_warning);
}

void expect_same_module(const ModuleReading& got, const ModuleReading& want) {
  EXPECT_EQ(got.status, want.status);
  EXPECT_EQ(got.note, want.note);
  EXPECT_EQ(got.spec, want.spec);
  EXPECT_EQ(got.identifier, want.identifier);
  EXPECT_EQ(got.identifier_text, want.identifier_text);
  EXPECT_EQ(got.vendor_name, want.vendor_name);
  EXPECT_EQ(got.part_number, want.part_number);
  EXPECT_EQ(got.serial_number, want.serial_number);
  EXPECT_EQ(got.temperature_c, want.temperature_c);
  EXPECT_EQ(got.supply_voltage_v, want.supply_voltage_v);
  EXPECT_EQ(got.rx_power_kind, want.rx_power_kind);
  ASSERT_EQ(got.lanes.size(), want.lanes.size());
  for (std::size_t i = 0; i < want.lanes.size(); ++i) {
    SCOPED_TRACE("lane " + std::to_string(i + 1));
    EXPECT_EQ(got.lanes[i].tx_bias_ma, want.lanes[i].tx_bias_ma);
    EXPECT_EQ(got.lanes[i].tx_power_mw, want.lanes[i].tx_power_mw);
    EXPECT_EQ(got.lanes[i].tx_power_dbm, want.lanes[i].tx_power_dbm);
    EXPECT_EQ(got.lanes[i].rx_power_mw, want.lanes[i].rx_power_mw);
    EXPECT_EQ(got.lanes[i].rx_power_dbm, want.lanes[i].rx_power_dbm);
  }
  EXPECT_EQ(got.lanes_dropped, want.lanes_dropped);
  for (const auto quantity : {ModuleQuantity::temperature, ModuleQuantity::voltage, ModuleQuantity::tx_bias,
                              ModuleQuantity::tx_power, ModuleQuantity::rx_power}) {
    SCOPED_TRACE("quantity " + std::to_string(static_cast<int>(quantity)));
    expect_same_thresholds(thresholds_of(got.thresholds, quantity), thresholds_of(want.thresholds, quantity));
  }
  EXPECT_EQ(got.flags_implemented, want.flags_implemented);
  ASSERT_EQ(got.flags_raised.size(), want.flags_raised.size());
  for (std::size_t i = 0; i < want.flags_raised.size(); ++i) {
    EXPECT_EQ(got.flags_raised[i].quantity, want.flags_raised[i].quantity);
    EXPECT_EQ(got.flags_raised[i].limit, want.flags_raised[i].limit);
    EXPECT_EQ(got.flags_raised[i].lane, want.flags_raised[i].lane);
  }
  EXPECT_EQ(got.lane_flags_ignored, want.lane_flags_ignored);
}

void expect_same_counter(const FecCounter& got, const FecCounter& want) {
  EXPECT_EQ(got.total, want.total);
  EXPECT_EQ(got.lanes, want.lanes);
}

ModuleReading cmis_module() {
  ModuleReading r;
  r.status = ModuleStatus::diagnostics;
  r.note = "lane flags ignored: ethtool misreads CMIS lane flags";
  r.spec = ModuleSpec::cmis;
  r.identifier = 0x18;
  r.identifier_text = "QSFP-DD Double Density 8X Pluggable Transceiver (INF-8628)";
  r.vendor_name = "FINISAR CORP.";
  r.part_number = "FTCD8613E1PCM";
  r.serial_number = "X5TAB12";
  r.temperature_c = 41.25;
  r.supply_voltage_v = 3.2871;
  r.rx_power_kind = RxPowerKind::average;
  for (int i = 0; i < 8; ++i) {
    OpticalLane lane;
    lane.tx_bias_ma = 7.5 + i;
    lane.tx_power_mw = 0.9 + 0.01 * i;
    lane.tx_power_dbm = -0.45 + 0.05 * i;
    lane.rx_power_mw = 0.8 - 0.02 * i;
    lane.rx_power_dbm = -0.97 - 0.1 * i;
    r.lanes.push_back(lane);
  }
  r.lanes[5].rx_power_mw.reset();  // no light: both absent
  r.lanes[5].rx_power_dbm.reset();
  r.lanes[6].tx_bias_ma.reset();
  r.thresholds.temperature_c = {75.0, -5.0, 70.0, 0.0};
  r.thresholds.voltage_v = {3.63, 2.97, 3.465, 3.135};
  r.thresholds.tx_bias_ma = {15.0, 2.0, 13.0, 3.0};
  r.thresholds.tx_power_mw = {3.1623, 0.1259, 2.5119, std::nullopt};
  r.thresholds.rx_power_mw = {3.4674, 0.0355, 2.7542, 0.0447};
  r.flags_implemented = true;
  r.flags_raised = {{ModuleQuantity::temperature, ModuleLimit::high_warning, std::nullopt},
                    {ModuleQuantity::voltage, ModuleLimit::low_alarm, std::nullopt},
                    {ModuleQuantity::rx_power, ModuleLimit::low_warning, 8u}};
  r.lane_flags_ignored = true;
  return r;
}

TEST(OpticsWire, ACmisModuleReadingArrivesAsItWasRead) {
  const ModuleReading read = cmis_module();
  const ModuleReading arrived = module_over_wire(read);
  expect_same_module(arrived, read);
  // Concrete values, not only sameness: a reading that lost everything both ways would pass above.
  ASSERT_EQ(arrived.lanes.size(), 8u);
  EXPECT_EQ(arrived.lanes[7].tx_bias_ma, 14.5);
  EXPECT_FALSE(arrived.lanes[5].rx_power_mw.has_value());
  EXPECT_EQ(arrived.thresholds.tx_power_mw.high_alarm, 3.1623);
  EXPECT_FALSE(arrived.thresholds.tx_power_mw.low_warning.has_value());
  ASSERT_EQ(arrived.flags_raised.size(), 3u);
  EXPECT_EQ(arrived.flags_raised[2].lane, 8u);
  EXPECT_EQ(arrived.vendor_name, "FINISAR CORP.");
}

TEST(OpticsWire, AModuleWithoutDiagnosticsKeepsItsAbsences) {
  ModuleReading read;
  read.status = ModuleStatus::no_diagnostics;
  read.note = "Optical diagnostics support: No";
  read.spec = ModuleSpec::sff8636;
  const ModuleReading arrived = module_over_wire(read);
  expect_same_module(arrived, read);
  EXPECT_EQ(arrived.status, ModuleStatus::no_diagnostics);
  EXPECT_FALSE(arrived.identifier.has_value());
  EXPECT_FALSE(arrived.temperature_c.has_value());
  EXPECT_FALSE(arrived.flags_implemented.has_value());
}

TEST(OpticsWire, AFecReadingArrivesAsItWasRead) {
  FecReading read;
  read.status = FecStatus::statistics;
  read.note = "kernel 6.18";
  read.configured = {FecMode::auto_select, FecMode::rs, FecMode::llrs};
  read.active = FecMode::rs;
  read.corrected_blocks = {123456789012ull, {10, std::nullopt, 30, 40}};
  read.uncorrectable_blocks = {0, {}};
  read.corrected_bits = {std::nullopt, {std::nullopt, 7}};
  read.histogram = {{0, 0, 1000000, {250000, 250000, 250000, 250000}},
                    {1, 3, 5000, {std::nullopt, 1, 2, 3}},
                    {4, 7, std::nullopt, {}}};
  read.lanes_dropped = true;
  const FecReading arrived = fec_over_wire(read);
  EXPECT_EQ(arrived.status, FecStatus::statistics);
  EXPECT_EQ(arrived.note, "kernel 6.18");
  EXPECT_EQ(arrived.configured, read.configured);
  EXPECT_EQ(arrived.active, FecMode::rs);
  expect_same_counter(arrived.corrected_blocks, read.corrected_blocks);
  expect_same_counter(arrived.uncorrectable_blocks, read.uncorrectable_blocks);
  expect_same_counter(arrived.corrected_bits, read.corrected_bits);
  EXPECT_EQ(arrived.corrected_blocks.total, 123456789012ull);
  EXPECT_EQ(arrived.corrected_blocks.lanes[1], std::nullopt);
  EXPECT_EQ(arrived.uncorrectable_blocks.total, 0u);  // zero is a count, not an absence
  EXPECT_FALSE(arrived.corrected_bits.total.has_value());
  ASSERT_EQ(arrived.histogram.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(arrived.histogram[i].low_symbols, read.histogram[i].low_symbols);
    EXPECT_EQ(arrived.histogram[i].high_symbols, read.histogram[i].high_symbols);
    EXPECT_EQ(arrived.histogram[i].total, read.histogram[i].total);
    EXPECT_EQ(arrived.histogram[i].lanes, read.histogram[i].lanes);
  }
  EXPECT_EQ(arrived.histogram[1].high_symbols, 3u);
  EXPECT_FALSE(arrived.histogram[2].total.has_value());
  EXPECT_TRUE(arrived.lanes_dropped);
}

TEST(OpticsWire, AnUnreadFecReadingStaysUnread) {
  const FecReading arrived = fec_over_wire(FecReading{});
  EXPECT_EQ(arrived.status, FecStatus::unreadable);
  EXPECT_FALSE(arrived.active.has_value());
  EXPECT_FALSE(arrived.corrected_blocks.total.has_value());
  EXPECT_TRUE(arrived.histogram.empty());
  EXPECT_FALSE(arrived.lanes_dropped);
}

TEST(OpticsWire, FillingAMessageAgainReplacesWhatItHeld) {
  proto::ModuleDiagnostics message;
  to_proto(cmis_module(), message);
  to_proto(cmis_module(), message);
  EXPECT_EQ(message.lanes_size(), 8);
  EXPECT_EQ(message.flags_raised_size(), 3);
}

TEST(OpticsWire, APeersThousandLanesAreCutToTheBound) {
  proto::ModuleDiagnostics message;
  for (int i = 0; i < 1000; ++i) message.add_lanes()->set_tx_bias_ma(i);
  const ModuleReading module = module_from_proto(message);
  ASSERT_EQ(module.lanes.size(), kMaxOpticsLanes);
  EXPECT_EQ(module.lanes.back().tx_bias_ma, 15.0);
  EXPECT_TRUE(module.lanes_dropped);

  proto::FecStats fec;
  fec.set_status(static_cast<std::uint32_t>(FecStatus::statistics));
  for (int i = 0; i < 1000; ++i) fec.mutable_corrected_blocks()->add_lanes()->set_has_value(true);
  for (int i = 0; i < 1000; ++i) {
    proto::FecHistogramBin& bin = *fec.add_histogram();
    bin.set_low_symbols(i);
    bin.set_high_symbols(i);
    for (int lane = 0; lane < 1000; ++lane) bin.add_lanes()->set_value(lane);
  }
  const FecReading reading = fec_from_proto(fec);
  EXPECT_EQ(reading.corrected_blocks.lanes.size(), kMaxOpticsLanes);
  ASSERT_EQ(reading.histogram.size(), kMaxFecHistogramBins);
  EXPECT_EQ(reading.histogram.back().low_symbols, 63u);
  EXPECT_EQ(reading.histogram.back().lanes.size(), kMaxOpticsLanes);
  EXPECT_EQ(reading.histogram.back().lanes[3], std::nullopt);  // has_value unset: not read
  EXPECT_TRUE(reading.lanes_dropped);
}

TEST(OpticsWire, APeersBinsPastTheBoundAloneSetLanesDropped) {
  proto::FecStats fec;
  for (int i = 0; i < 65; ++i) fec.add_histogram();
  EXPECT_TRUE(fec_from_proto(fec).lanes_dropped);
  fec.mutable_histogram()->RemoveLast();
  EXPECT_FALSE(fec_from_proto(fec).lanes_dropped);
}

TEST(OpticsWire, NonFiniteNumbersReadAsAbsent) {
  proto::ModuleDiagnostics message;
  message.set_temperature_c(kNaN);
  message.set_supply_voltage_v(-kInf);
  message.mutable_rx_power_mw_thresholds()->set_high_alarm(kInf);
  message.mutable_rx_power_mw_thresholds()->set_low_alarm(0.0355);
  proto::OpticalLane& lane = *message.add_lanes();
  lane.set_rx_power_mw(kNaN);
  lane.set_rx_power_dbm(-kInf);
  lane.set_tx_bias_ma(7.25);
  const ModuleReading module = module_from_proto(message);
  EXPECT_FALSE(module.temperature_c.has_value());
  EXPECT_FALSE(module.supply_voltage_v.has_value());
  EXPECT_FALSE(module.thresholds.rx_power_mw.high_alarm.has_value());
  EXPECT_EQ(module.thresholds.rx_power_mw.low_alarm, 0.0355);
  ASSERT_EQ(module.lanes.size(), 1u);
  EXPECT_FALSE(module.lanes[0].rx_power_mw.has_value());
  EXPECT_FALSE(module.lanes[0].rx_power_dbm.has_value());
  EXPECT_EQ(module.lanes[0].tx_bias_ma, 7.25);
}

TEST(OpticsWire, EnumValuesPastTheirEnumReadAsUnknown) {
  proto::ModuleDiagnostics message;
  message.set_status(999);
  message.set_spec(999);
  message.set_rx_power_kind(999);
  message.set_identifier(0x1FF);
  const ModuleReading module = module_from_proto(message);
  EXPECT_EQ(module.status, ModuleStatus::unreadable);
  EXPECT_EQ(module.spec, ModuleSpec::unknown);
  EXPECT_EQ(module.rx_power_kind, RxPowerKind::unknown);
  EXPECT_FALSE(module.identifier.has_value());

  proto::FecStats fec;
  fec.set_status(999);
  fec.add_configured(static_cast<std::uint32_t>(FecMode::rs));
  fec.add_configured(999);
  fec.set_active(999);
  const FecReading reading = fec_from_proto(fec);
  EXPECT_EQ(reading.status, FecStatus::unreadable);
  EXPECT_EQ(reading.configured, (std::vector<FecMode>{FecMode::rs, FecMode::other}));
  EXPECT_EQ(reading.active, FecMode::other);

  for (int i = 0; i < 1000; ++i) fec.add_configured(1);
  EXPECT_EQ(fec_from_proto(fec).configured.size(), kMaxFecModes);
}

TEST(OpticsWire, APeersTextsAreCutAndMadePrintable) {
  std::string vendor("  \x1b[31mEVIL\0\r\n", 14);
  while (vendor.size() < 10 * 1024) vendor += "ab\x7f";
  proto::ModuleDiagnostics message;
  message.set_vendor_name(vendor);
  message.set_note(std::string(10 * 1024, '\n') + "\xe2\x82\xac");
  message.set_serial_number("\x9b[2J");  // a C1 CSI: clears the terminal
  const ModuleReading module = module_from_proto(message);
  EXPECT_EQ(module.vendor_name, "_[31mEVIL___ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_a");
  EXPECT_EQ(module.vendor_name.size(), kMaxOpticsTextBytes);
  EXPECT_EQ(module.note, "___");  // blanks trimmed, the euro sign's three bytes each '_'
  EXPECT_EQ(module.serial_number, "_[2J");

  proto::FecStats fec;
  fec.set_note(vendor);
  EXPECT_EQ(fec_from_proto(fec).note, module.vendor_name);
}

TEST(OpticsWire, APeersFlagsAreBoundedAsTheParserBoundsThem) {
  proto::ModuleDiagnostics message;
  const auto add_flag = [&message](std::uint32_t quantity, std::uint32_t limit, std::optional<std::uint32_t> lane) {
    proto::ModuleFlag& flag = *message.add_flags_raised();
    flag.set_quantity(quantity);
    flag.set_limit(limit);
    if (lane) flag.set_lane(*lane);
  };
  const auto tx_power = static_cast<std::uint32_t>(ModuleQuantity::tx_power);
  const auto low_alarm = static_cast<std::uint32_t>(ModuleLimit::low_alarm);
  add_flag(tx_power, low_alarm, 0u);   // no lane 0: dropped
  add_flag(tx_power, low_alarm, 16u);  // the last lane kept
  add_flag(tx_power, low_alarm, 16u);  // a repeat: kept once
  add_flag(999, low_alarm, 1u);        // no such quantity
  add_flag(tx_power, 999, 1u);         // no such limit
  add_flag(tx_power, low_alarm, std::nullopt);
  ModuleReading module = module_from_proto(message);
  ASSERT_EQ(module.flags_raised.size(), 2u);
  EXPECT_EQ(module.flags_raised[0].quantity, ModuleQuantity::tx_power);
  EXPECT_EQ(module.flags_raised[0].limit, ModuleLimit::low_alarm);
  EXPECT_EQ(module.flags_raised[0].lane, 16u);
  EXPECT_EQ(module.flags_raised[1].lane, std::nullopt);
  EXPECT_FALSE(module.lanes_dropped);

  add_flag(tx_power, low_alarm, 99u);  // past the lanes kept: dropped, and said
  module = module_from_proto(message);
  EXPECT_EQ(module.flags_raised.size(), 2u);
  EXPECT_TRUE(module.lanes_dropped);

  // Every flag there can be, ten times over: each once.
  for (int round = 0; round < 10; ++round) {
    for (std::uint32_t quantity = 0; quantity < 5; ++quantity) {
      for (std::uint32_t limit = 0; limit < 4; ++limit) {
        add_flag(quantity, limit, std::nullopt);
        for (std::uint32_t lane = 1; lane <= kMaxOpticsLanes; ++lane) add_flag(quantity, limit, lane);
      }
    }
  }
  module = module_from_proto(message);
  EXPECT_EQ(module.flags_raised.size(), kMaxModuleFlags);
  EXPECT_EQ(kMaxModuleFlags, 340u);
}

}  // namespace
}  // namespace tusk
