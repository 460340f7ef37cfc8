#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "agent/optics/ethtool_output.hpp"
#include "agent/optics/fec_stats.hpp"
#include "agent/optics/module_diagnostics.hpp"
#include "common/optics_reading.hpp"
#include "controller/verdict/optics_verdict.hpp"
#include "tests/agent/optics/ethtool_optics_samples.hpp"

namespace tusk::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;

bool has_flag(const ModuleReading& reading, ModuleQuantity quantity, ModuleLimit limit,
              std::optional<std::uint32_t> lane) {
  for (const ModuleFlag& flag : reading.flags_raised) {
    if (flag.quantity == quantity && flag.limit == limit && flag.lane == lane) return true;
  }
  return false;
}

// ---- Module diagnostics, text -------------------------------------------------------------------

TEST(ModuleDiagnosticsText, SfpWithDiagnostics) {
  const ModuleReading r = parse_module_diagnostics(kSfpText);
  EXPECT_EQ(r.status, ModuleStatus::diagnostics);
  EXPECT_EQ(r.spec, ModuleSpec::sff8472);
  EXPECT_THAT(r.identifier, Optional(0x03u));
  EXPECT_EQ(r.identifier_text, "SFP");
  EXPECT_EQ(r.vendor_name, "FINISAR CORP.");
  EXPECT_EQ(r.part_number, "FTLX8574D3BCL");
  EXPECT_EQ(r.serial_number, "AQG0N4R");
  EXPECT_THAT(r.temperature_c, Optional(32.46));
  EXPECT_THAT(r.supply_voltage_v, Optional(3.3152));
  EXPECT_EQ(r.rx_power_kind, RxPowerKind::average);
  ASSERT_EQ(r.lanes.size(), 1u);
  EXPECT_THAT(r.lanes[0].tx_bias_ma, Optional(7.862));
  EXPECT_THAT(r.lanes[0].tx_power_mw, Optional(0.5871));
  EXPECT_THAT(r.lanes[0].tx_power_dbm, Optional(-2.31));
  EXPECT_THAT(r.lanes[0].rx_power_mw, Optional(0.4957));
  EXPECT_THAT(r.lanes[0].rx_power_dbm, Optional(-3.05));
  EXPECT_THAT(r.flags_implemented, Optional(true));
  EXPECT_THAT(r.thresholds.temperature_c.high_alarm, Optional(78.0));
  EXPECT_THAT(r.thresholds.temperature_c.low_alarm, Optional(-13.0));
  EXPECT_THAT(r.thresholds.tx_bias_ma.high_warning, Optional(12.6));
  EXPECT_THAT(r.thresholds.voltage_v.low_warning, Optional(3.0));
  EXPECT_THAT(r.thresholds.tx_power_mw.low_alarm, Optional(0.1862));
  EXPECT_THAT(r.thresholds.rx_power_mw.low_warning, Optional(0.0158));
  ASSERT_EQ(r.flags_raised.size(), 1u);
  EXPECT_TRUE(has_flag(r, ModuleQuantity::temperature, ModuleLimit::high_warning, std::nullopt));
  EXPECT_FALSE(r.lanes_dropped);
}

TEST(ModuleDiagnosticsText, Qsfp28WithFourLanes) {
  const ModuleReading r = parse_module_diagnostics(kQsfp28Text);
  EXPECT_EQ(r.status, ModuleStatus::diagnostics);
  EXPECT_EQ(r.spec, ModuleSpec::sff8636);
  EXPECT_EQ(r.identifier_text, "QSFP28");
  EXPECT_EQ(r.part_number, "FTLC9551REPM");
  EXPECT_THAT(r.temperature_c, Optional(36.21));
  ASSERT_EQ(r.lanes.size(), 4u);
  EXPECT_THAT(r.lanes[0].tx_bias_ma, Optional(6.75));
  EXPECT_THAT(r.lanes[3].tx_bias_ma, Optional(6.688));
  EXPECT_THAT(r.lanes[1].tx_power_mw, Optional(0.8013));
  // "Rcvr signal avg optical power(Channel 3)": 6.1 prints no space before the channel.
  EXPECT_THAT(r.lanes[2].rx_power_mw, Optional(0.1047));
  EXPECT_THAT(r.lanes[2].rx_power_dbm, Optional(-9.80));
  EXPECT_EQ(r.rx_power_kind, RxPowerKind::average);
  EXPECT_THAT(r.thresholds.rx_power_mw.low_warning, Optional(0.1445));
  EXPECT_THAT(r.thresholds.rx_power_mw.low_alarm, Optional(0.0724));
  // "Laser rx power low warning  (Channel 3)": padded inside, numbered at the end.
  ASSERT_EQ(r.flags_raised.size(), 1u);
  EXPECT_TRUE(has_flag(r, ModuleQuantity::rx_power, ModuleLimit::low_warning, 3u));
  EXPECT_FALSE(r.lane_flags_ignored);
}

TEST(ModuleDiagnosticsText, CmisWithEightLanesKeepsNoLaneFlags) {
  const ModuleReading r = parse_module_diagnostics(kCmisText);
  EXPECT_EQ(r.status, ModuleStatus::diagnostics);
  EXPECT_EQ(r.spec, ModuleSpec::cmis);
  EXPECT_THAT(r.identifier, Optional(0x18u));
  EXPECT_EQ(r.identifier_text, "QSFP-DD Double Density 8X Pluggable Transceiver (INF-8628)");
  EXPECT_EQ(r.vendor_name, "NVIDIA");
  EXPECT_EQ(r.serial_number, "MT2231FT01234");
  EXPECT_THAT(r.temperature_c, Optional(45.12));
  ASSERT_EQ(r.lanes.size(), 8u);
  EXPECT_THAT(r.lanes[7].tx_bias_ma, Optional(7.54));
  // No light: 0 mW, and "-inf dBm" is no number.
  EXPECT_THAT(r.lanes[7].rx_power_mw, Optional(0.0));
  EXPECT_EQ(r.lanes[7].rx_power_dbm, std::nullopt);
  EXPECT_THAT(r.thresholds.rx_power_mw.low_alarm, Optional(0.0407));
  // 6.1's lane flags (`byte & lane index`) name the wrong lanes: dropped.
  EXPECT_TRUE(r.lane_flags_ignored);
  EXPECT_TRUE(r.flags_raised.empty());
}

TEST(ModuleDiagnosticsText, PassiveCopperHasNoDiagnosticsNotZeros) {
  const ModuleReading r = parse_module_diagnostics(kQsfpDacText);
  EXPECT_EQ(r.status, ModuleStatus::no_diagnostics);
  EXPECT_EQ(r.vendor_name, "Mellanox");
  EXPECT_EQ(r.part_number, "MCP1600-C003");
  EXPECT_EQ(r.temperature_c, std::nullopt);
  EXPECT_EQ(r.supply_voltage_v, std::nullopt);
  EXPECT_TRUE(r.lanes.empty());
  EXPECT_THAT(r.note, HasSubstr("no monitors"));
}

TEST(ModuleDiagnosticsText, SfpSayingNoDiagnostics) {
  const ModuleReading r = parse_module_diagnostics(kSfpNoDomText);
  EXPECT_EQ(r.status, ModuleStatus::no_diagnostics);
  EXPECT_EQ(r.note, "Optical diagnostics support: No");
  EXPECT_EQ(r.vendor_name, "CISCO-TYCO");
  EXPECT_EQ(r.spec, ModuleSpec::sff8472);
}

TEST(ModuleDiagnosticsText, DriverWithoutModuleAccessHasNoDiagnostics) {
  for (const std::string_view output : {"Cannot get module EEPROM information: Operation not supported\n",
                                        "netlink error: Operation not supported\n"}) {
    const ModuleReading r = parse_module_diagnostics(output);
    EXPECT_EQ(r.status, ModuleStatus::no_diagnostics) << output;
    EXPECT_THAT(r.note, HasSubstr("Operation not supported"));
  }
}

TEST(ModuleDiagnosticsText, OtherFailuresAreUnreadableWithWhatEthtoolSaid) {
  const ModuleReading refused =
      parse_module_diagnostics("ethtool: bad command line argument(s)\nFor more information run ethtool -h\n");
  EXPECT_EQ(refused.status, ModuleStatus::unreadable);
  EXPECT_THAT(refused.note, HasSubstr("bad command line"));
  const ModuleReading failed = parse_module_diagnostics("Cannot get Module EEPROM data: Input/output error\n");
  EXPECT_EQ(failed.status, ModuleStatus::unreadable);
  EXPECT_THAT(failed.note, HasSubstr("Input/output error"));
  const ModuleReading hex = parse_module_diagnostics("Offset\t\tValues\n------\t\t------\n0x0000:\t\t1e 40 00 07\n");
  EXPECT_EQ(hex.status, ModuleStatus::unreadable);
  EXPECT_THAT(hex.note, HasSubstr("hex"));
  EXPECT_EQ(parse_module_diagnostics("").status, ModuleStatus::unreadable);
  // A page that would not read after the identity: unreadable, not "no diagnostics".
  const ModuleReading cut =
      parse_module_diagnostics(std::string(kSfpNoDomText.substr(0, 200)) + "\nnetlink error: Input/output error\n");
  EXPECT_EQ(cut.status, ModuleStatus::unreadable);
  EXPECT_THAT(cut.note, HasSubstr("Input/output error"));
}

// ---- Module diagnostics, JSON -------------------------------------------------------------------

TEST(ModuleDiagnosticsJson, SfpKeepsReadingsWhereThresholdsRepeatTheirNames) {
  for (const std::string_view output : {kSfpJsonRepeatedKeys, kSfpJsonThresholdKeys}) {
    const ModuleReading r = parse_module_diagnostics(output);
    EXPECT_EQ(r.status, ModuleStatus::diagnostics);
    EXPECT_EQ(r.spec, ModuleSpec::sff8472);
    EXPECT_EQ(r.vendor_name, "FINISAR CORP.");
    EXPECT_EQ(r.serial_number, "AQG0N4R");
    EXPECT_THAT(r.temperature_c, Optional(32.4609));
    EXPECT_THAT(r.supply_voltage_v, Optional(3.3152));
    ASSERT_EQ(r.lanes.size(), 1u);
    EXPECT_THAT(r.lanes[0].tx_bias_ma, Optional(7.862));
    EXPECT_THAT(r.lanes[0].tx_power_mw, Optional(0.5871));
    EXPECT_THAT(r.lanes[0].rx_power_mw, Optional(0.4957));
    ASSERT_TRUE(r.lanes[0].rx_power_dbm);
    EXPECT_NEAR(*r.lanes[0].rx_power_dbm, -3.05, 0.005);
    EXPECT_EQ(r.rx_power_kind, RxPowerKind::average);
    EXPECT_THAT(r.thresholds.temperature_c.high_alarm, Optional(78.0));
    EXPECT_THAT(r.thresholds.tx_bias_ma.low_alarm, Optional(4.0));
    EXPECT_THAT(r.thresholds.rx_power_mw.low_warning, Optional(0.0158));
    EXPECT_TRUE(has_flag(r, ModuleQuantity::temperature, ModuleLimit::high_warning, std::nullopt));
    EXPECT_EQ(r.flags_raised.size(), 1u);
  }
}

TEST(ModuleDiagnosticsJson, Qsfp28LanesAndLaneFlags) {
  const ModuleReading r = parse_module_diagnostics(kQsfp28Json);
  EXPECT_EQ(r.status, ModuleStatus::diagnostics);
  EXPECT_EQ(r.spec, ModuleSpec::sff8636);
  EXPECT_THAT(r.temperature_c, Optional(36.2109));
  ASSERT_EQ(r.lanes.size(), 4u);
  EXPECT_THAT(r.lanes[2].rx_power_mw, Optional(0.1047));
  ASSERT_TRUE(r.lanes[2].rx_power_dbm);
  EXPECT_NEAR(*r.lanes[2].rx_power_dbm, -9.80, 0.005);
  EXPECT_THAT(r.lanes[3].tx_bias_ma, Optional(6.688));
  EXPECT_THAT(r.thresholds.rx_power_mw.low_warning, Optional(0.1445));
  EXPECT_THAT(r.thresholds.temperature_c.high_warning, Optional(70.0));
  ASSERT_EQ(r.flags_raised.size(), 1u);
  EXPECT_TRUE(has_flag(r, ModuleQuantity::rx_power, ModuleLimit::low_warning, 3u));
}

TEST(ModuleDiagnosticsJson, CmisBanksRepeatTheirNamesAndMakeSixteenLanes) {
  const ModuleReading r = parse_module_diagnostics(kCmis16LaneJson);
  EXPECT_EQ(r.status, ModuleStatus::diagnostics);
  EXPECT_EQ(r.spec, ModuleSpec::cmis);
  ASSERT_EQ(r.lanes.size(), 16u);
  EXPECT_FALSE(r.lanes_dropped);
  EXPECT_THAT(r.lanes[8].tx_bias_ma, Optional(8.0));
  EXPECT_THAT(r.lanes[13].rx_power_mw, Optional(0.05));
  EXPECT_THAT(r.lanes[15].rx_power_mw, Optional(0.8));
  EXPECT_THAT(r.thresholds.rx_power_mw.low_warning, Optional(0.0813));
  EXPECT_THAT(r.thresholds.voltage_v.high_alarm, Optional(3.465));
  EXPECT_TRUE(r.lane_flags_ignored);
  EXPECT_TRUE(r.flags_raised.empty());
}

TEST(ModuleDiagnosticsJson, NoDiagnosticsSupport) {
  const ModuleReading r = parse_module_diagnostics(
      R"([ { "identifier": 3, "identifier_description": "SFP", "vendor_name": "CISCO-TYCO",
             "optical_diagnostics_support": false } ])");
  EXPECT_EQ(r.status, ModuleStatus::no_diagnostics);
  EXPECT_EQ(r.vendor_name, "CISCO-TYCO");
}

// ---- Module diagnostics, hostile ----------------------------------------------------------------

TEST(ModuleDiagnosticsHostile, AThousandLanesKeepSixteen) {
  std::string text = "\tIdentifier                                : 0x18 (QSFP-DD)\n";
  std::string json = R"([ { "identifier": 24, "laser_tx_bias_current": [)";
  for (int lane = 1; lane <= 1000; ++lane) {
    text += "\tRcvr signal avg optical power (Channel " + std::to_string(lane) + ") : 0.5000 mW / -3.01 dBm\n";
    text += "\tLaser rx power low alarm    (Chan " + std::to_string(lane) + ") : On\n";
    json += (lane > 1 ? "," : "") + std::string("7.5");
  }
  json += "] } ]";
  for (const std::string& output : {text, json}) {
    const ModuleReading r = parse_module_diagnostics(output);
    EXPECT_EQ(r.status, ModuleStatus::diagnostics);
    EXPECT_EQ(r.lanes.size(), kMaxOpticsLanes);
    EXPECT_TRUE(r.lanes_dropped);
    EXPECT_LE(r.flags_raised.size(), kMaxOpticsLanes);
  }
}

TEST(ModuleDiagnosticsHostile, NumbersThatAreNoNumbersAreAbsent) {
  const ModuleReading r = parse_module_diagnostics(
      "\tIdentifier                                : 0x03 (SFP)\n"
      "\tOptical diagnostics support               : Yes\n"
      "\tLaser bias current                        : nan mA\n"
      "\tLaser output power                        : inf mW / inf dBm\n"
      "\tReceiver signal average optical power     : 1e999 mW / 0x10 dBm\n"
      "\tModule temperature                        : -1e400 degrees C / 1 degrees F\n"
      "\tModule voltage                            : 3.3.3 V\n");
  EXPECT_EQ(r.status, ModuleStatus::diagnostics);
  EXPECT_EQ(r.temperature_c, std::nullopt);
  EXPECT_THAT(r.supply_voltage_v, Optional(3.3));  // "3.3.3": the number it starts with
  ASSERT_EQ(r.lanes.size(), 1u);
  EXPECT_EQ(r.lanes[0].tx_bias_ma, std::nullopt);
  EXPECT_EQ(r.lanes[0].tx_power_mw, std::nullopt);
  EXPECT_EQ(r.lanes[0].tx_power_dbm, std::nullopt);
  EXPECT_EQ(r.lanes[0].rx_power_mw, std::nullopt);
  EXPECT_THAT(r.lanes[0].rx_power_dbm, Optional(0.0));  // "0x10": the 0 it starts with
}

TEST(ModuleDiagnosticsHostile, LongAndBinaryTextIsBounded) {
  std::string name(500, 'A');
  name[3] = '\x1b';
  name[4] = '\x7f';
  const ModuleReading r = parse_module_diagnostics("\tVendor name                               : " + name +
                                                   "\n\tVendor SN : \xff\xfe\x01xyz\n");
  EXPECT_EQ(r.vendor_name.size(), kMaxOpticsTextBytes);
  EXPECT_EQ(r.vendor_name.substr(0, 4), "AAA_");
  EXPECT_EQ(r.serial_number, "___xyz");
}

TEST(ModuleDiagnosticsHostile, BrokenJsonIsUnreadable) {
  const std::string truncated(kQsfp28Json.substr(0, kQsfp28Json.size() / 2));
  for (const std::string& output :
       {truncated, std::string(R"([ { "module_temperature": 1e999 } ])"), std::string("[ 1, 2, 3 ]"),
        std::string(100000, '['), std::string(100000, '[') + std::string(100000, ']'), std::string("{}")}) {
    const ModuleReading r = parse_module_diagnostics(output);
    EXPECT_EQ(r.status, ModuleStatus::unreadable) << output.substr(0, 40);
    EXPECT_FALSE(r.note.empty());
  }
}

TEST(ModuleDiagnosticsHostile, GarbageAndRepeatsCostLittle) {
  std::string garbage;
  for (int i = 0; i < 200000; ++i) garbage.push_back(static_cast<char>((i * 7919) % 256));
  EXPECT_EQ(parse_module_diagnostics(garbage).status, ModuleStatus::unreadable);

  // A key repeated 20,000 times keeps its first kMaxEthtoolJsonRepeats values.
  std::string repeated = "[ {";
  for (int i = 0; i < 20000; ++i) repeated += R"("module_temperature": 40.5, )";
  repeated += R"("alarm/warning_flags_implemented": true } ])";
  const ModuleReading r = parse_module_diagnostics(repeated);
  EXPECT_EQ(r.status, ModuleStatus::diagnostics);
  EXPECT_THAT(r.temperature_c, Optional(40.5));
  // Past kMaxEthtoolOutputBytes the output is cut, and cut JSON is no JSON.
  std::string huge = "[ {";
  while (huge.size() <= kMaxEthtoolOutputBytes) huge += R"("module_temperature": 40.5, )";
  huge += R"("alarm/warning_flags_implemented": true } ])";
  EXPECT_EQ(parse_module_diagnostics(huge).status, ModuleStatus::unreadable);

  std::string flags = "\tIdentifier                                : 0x11 (QSFP28)\n";
  for (int i = 0; i < 100000; ++i) flags += "\tModule temperature high alarm             : On\n";
  EXPECT_EQ(parse_module_diagnostics(flags).flags_raised.size(), 1u);
}

// ---- FEC statistics -----------------------------------------------------------------------------

void expect_lanes_reading(const FecReading& r) {
  EXPECT_EQ(r.status, FecStatus::statistics);
  EXPECT_THAT(r.configured, ElementsAre(FecMode::auto_select, FecMode::rs, FecMode::baser));
  EXPECT_THAT(r.active, Optional(FecMode::rs));
  EXPECT_THAT(r.corrected_blocks.total, Optional(12345u));
  EXPECT_THAT(r.corrected_blocks.lanes,
              ElementsAre(Optional(3000u), Optional(3100u), Optional(3200u), Optional(3045u)));
  EXPECT_THAT(r.uncorrectable_blocks.total, Optional(2u));
  EXPECT_THAT(r.uncorrectable_blocks.lanes, ElementsAre(Optional(0u), Optional(0u), Optional(2u), Optional(0u)));
  EXPECT_EQ(r.corrected_bits.total, std::nullopt);
  EXPECT_TRUE(r.histogram.empty());
}

TEST(FecStats, PerLaneText) {
  expect_lanes_reading(parse_fec_stats(kFecLanesText));
}

TEST(FecStats, PerLaneJson) {
  expect_lanes_reading(parse_fec_stats(kFecLanesJson));
}

TEST(FecStats, TotalsOnly) {
  const FecReading r = parse_fec_stats(kFecTotalsJson);
  EXPECT_EQ(r.status, FecStatus::statistics);
  EXPECT_THAT(r.active, Optional(FecMode::baser));
  EXPECT_THAT(r.corrected_blocks.total, Optional(42u));
  EXPECT_TRUE(r.corrected_blocks.lanes.empty());
  EXPECT_THAT(r.corrected_bits.total, Optional(57u));
  // A counter as a bare number is its total.
  const FecReading bare = parse_fec_stats(R"([ { "statistics": { "corrected_blocks": 7 } } ])");
  EXPECT_THAT(bare.corrected_blocks.total, Optional(7u));
}

TEST(FecStats, WithoutStatistics) {
  const FecReading settings = parse_fec_stats(kFecNoStatisticsText);
  EXPECT_EQ(settings.status, FecStatus::no_statistics);
  EXPECT_THAT(settings.configured, ElementsAre(FecMode::off));
  EXPECT_THAT(settings.active, Optional(FecMode::off));
  const FecReading unsupported = parse_fec_stats(kFecNotSupported);
  EXPECT_EQ(unsupported.status, FecStatus::no_statistics);
  EXPECT_THAT(unsupported.note, HasSubstr("Operation not supported"));
  EXPECT_EQ(parse_fec_stats(R"([ { "ifname": "eth0", "config": [ "Off" ], "active": [ "Off" ] } ])").status,
            FecStatus::no_statistics);
  EXPECT_EQ(parse_fec_stats("Cannot get FEC settings: Operation not supported\n").status, FecStatus::no_statistics);
  EXPECT_EQ(parse_fec_stats("netlink error: No such device\n").status, FecStatus::unreadable);
}

TEST(FecStats, Histogram) {
  for (const std::string_view output : {kFecHistogramJson, kFecHistogramText}) {
    const FecReading r = parse_fec_stats(output);
    EXPECT_EQ(r.status, FecStatus::statistics);
    EXPECT_THAT(r.active, Optional(FecMode::rs));
    EXPECT_THAT(r.uncorrectable_blocks.total, Optional(4u));
    ASSERT_EQ(r.histogram.size(), 3u);
    EXPECT_EQ(r.histogram[0].low_symbols, 0u);
    EXPECT_EQ(r.histogram[0].high_symbols, 0u);
    EXPECT_THAT(r.histogram[0].total, Optional(445u));
    EXPECT_EQ(r.histogram[1].low_symbols, 1u);
    EXPECT_EQ(r.histogram[1].high_symbols, 3u);
    EXPECT_THAT(r.histogram[1].total, Optional(12u));
    EXPECT_THAT(r.histogram[2].lanes, ElementsAre(Optional(0u), Optional(2u), Optional(0u), Optional(0u)));
    EXPECT_EQ(r.histogram[2].high_symbols, 7u);
  }
  const FecReading text = parse_fec_stats(kFecHistogramText);
  EXPECT_THAT(text.corrected_blocks.lanes, ElementsAre(Optional(30u), Optional(31u), Optional(32u), Optional(30u)));
  EXPECT_EQ(parse_fec_stats("Statistics:\n  fec_symbol_err_2_to_5: 9\n").histogram.at(0).high_symbols, 5u);
}

TEST(FecStats, Modes) {
  EXPECT_EQ(fec_mode_of("RS"), FecMode::rs);
  EXPECT_EQ(fec_mode_of("BaseR"), FecMode::baser);
  EXPECT_EQ(fec_mode_of("BASER"), FecMode::baser);
  EXPECT_EQ(fec_mode_of("LLRS"), FecMode::llrs);
  EXPECT_EQ(fec_mode_of("Off"), FecMode::off);
  EXPECT_EQ(fec_mode_of("None"), FecMode::none);
  EXPECT_EQ(fec_mode_of("Auto"), FecMode::auto_select);
  EXPECT_EQ(fec_mode_of("BIT42"), FecMode::other);
}

TEST(FecStatsHostile, LanesAndBinsAreBounded) {
  std::string text = "Statistics:\n  corrected_blocks: 5\n";
  std::string json = R"([ { "statistics": { "corrected_blocks": { "total": 5, "lanes": [)";
  std::string bins = R"([ { "statistics": { "hist": [)";
  for (int lane = 0; lane < 1000; ++lane) {
    text += "    Lane " + std::to_string(lane) + ": 1\n";
    json += (lane > 0 ? "," : "") + std::string("1");
    bins += (lane > 0 ? "," : "") + std::string(R"({ "bin_low": 1, "bin_high": 2, "total": 3 })");
  }
  json += "] } } } ]";
  bins += "] } } ]";
  for (const std::string& output : {text, json}) {
    const FecReading r = parse_fec_stats(output);
    EXPECT_EQ(r.corrected_blocks.lanes.size(), kMaxOpticsLanes);
    EXPECT_TRUE(r.lanes_dropped);
  }
  const FecReading binned = parse_fec_stats(bins);
  EXPECT_EQ(binned.histogram.size(), kMaxFecHistogramBins);
  EXPECT_TRUE(binned.lanes_dropped);
}

TEST(FecStatsHostile, BadNumbersAreAbsentAndBrokenJsonUnreadable) {
  const FecReading r = parse_fec_stats(
      R"([ { "statistics": { "corrected_blocks": { "total": 99999999999999999999999, "lanes": [ -1, 1.5, "7", 8 ] },
                              "uncorrectable_blocks": { "total": 18446744073709551615 } } } ])");
  EXPECT_EQ(r.corrected_blocks.total, std::nullopt);
  EXPECT_THAT(r.corrected_blocks.lanes, ElementsAre(std::optional<std::uint64_t>(), std::optional<std::uint64_t>(),
                                                    std::optional<std::uint64_t>(), Optional(8u)));
  EXPECT_THAT(r.uncorrectable_blocks.total, Optional(18446744073709551615u));
  const FecReading text = parse_fec_stats("Statistics:\n  corrected_blocks: 18446744073709551616\n    Lane x: 4\n");
  EXPECT_EQ(text.corrected_blocks.total, std::nullopt);
  const std::string truncated(kFecLanesJson.substr(0, 80));
  EXPECT_EQ(parse_fec_stats(truncated).status, FecStatus::unreadable);
  std::string garbage;
  for (int i = 0; i < 100000; ++i) garbage.push_back(static_cast<char>((i * 131) % 256));
  EXPECT_EQ(parse_fec_stats(garbage).status, FecStatus::unreadable);
}

// ---- ethtool_output -----------------------------------------------------------------------------

TEST(EthtoolOutput, NumbersAndText) {
  EXPECT_THAT(leading_number(" 7.862 mA"), Optional(7.862));
  EXPECT_EQ(leading_number("-inf dBm"), std::nullopt);
  EXPECT_EQ(leading_number("nan"), std::nullopt);
  EXPECT_EQ(leading_number(""), std::nullopt);
  EXPECT_THAT(whole_count("18446744073709551615"), Optional(18446744073709551615u));
  EXPECT_EQ(whole_count("18446744073709551616"), std::nullopt);
  EXPECT_EQ(whole_count("12 mA"), std::nullopt);
  EXPECT_EQ(bounded_text("  a\tb  "), "a_b");
  EXPECT_EQ(ethtool_lines("a\r\nb\n").size(), 2u);
}

// ---- Parsed and judged --------------------------------------------------------------------------

TEST(OpticsParsedAndJudged, LowRxPowerOnLaneThreeOfTheQsfp) {
  OpticsPortReadings readings;
  readings.port = "host-a/ens1f0np0";
  readings.module = parse_module_diagnostics(kQsfp28Text);
  OpticsThresholds thresholds;
  thresholds.min_rx_power_dbm = -7.0;
  const OpticsVerdict verdict = judge_optics(readings, thresholds);
  ASSERT_EQ(verdict.findings.size(), 1u);
  const OpticsFinding& finding = verdict.findings[0];
  EXPECT_THAT(finding.lane, Optional(3u));
  EXPECT_EQ(finding.what, OpticsMeasure::rx_power_dbm);
  EXPECT_EQ(finding.severity, OpticsSeverity::failure);
  EXPECT_EQ(finding.limit_source, OpticsLimitSource::profile);
  EXPECT_THAT(finding.text, HasSubstr("lane 3 RX power -9.80 dBm below -7.00 dBm: clean"));
  EXPECT_TRUE(verdict.failed());
}

}  // namespace
}  // namespace tusk::testing
