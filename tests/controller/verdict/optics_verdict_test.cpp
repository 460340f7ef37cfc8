#include "controller/verdict/optics_verdict.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/optics_reading.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

// A healthy 4-lane QSFP28 with SFF-8636 thresholds (as parsed from ethtool -m).
ModuleReading healthy_qsfp() {
  ModuleReading module;
  module.status = ModuleStatus::diagnostics;
  module.spec = ModuleSpec::sff8636;
  module.temperature_c = 36.2;
  module.supply_voltage_v = 3.28;
  module.lanes.resize(4);
  for (OpticalLane& lane : module.lanes) {
    lane.tx_bias_ma = 6.8;
    lane.tx_power_mw = 0.78;
    lane.rx_power_mw = 0.69;
    lane.rx_power_dbm = -1.61;
  }
  module.thresholds.temperature_c = {75.0, -5.0, 70.0, 0.0};
  module.thresholds.voltage_v = {3.63, 2.97, 3.465, 3.135};
  module.thresholds.tx_bias_ma = {10.0, 2.0, 9.0, 3.0};
  module.thresholds.tx_power_mw = {3.4674, 0.0724, 1.7378, 0.1445};
  module.thresholds.rx_power_mw = {3.4674, 0.0724, 1.7378, 0.1445};
  return module;
}

OpticsPortReadings port_with(ModuleReading module) {
  OpticsPortReadings readings;
  readings.port = "host-a/ens1f0np0";
  readings.module = std::move(module);
  return readings;
}

FecReading fec_sample(std::uint64_t corrected, std::vector<std::optional<std::uint64_t>> lanes,
                      std::uint64_t uncorrectable = 0) {
  FecReading fec;
  fec.status = FecStatus::statistics;
  fec.active = FecMode::rs;
  fec.corrected_blocks.total = corrected;
  fec.corrected_blocks.lanes = std::move(lanes);
  fec.uncorrectable_blocks.total = uncorrectable;
  return fec;
}

const OpticsFinding* finding_for(const OpticsVerdict& verdict, OpticsMeasure what, std::optional<std::uint32_t> lane) {
  for (const OpticsFinding& finding : verdict.findings) {
    if (finding.what == what && finding.lane == lane) return &finding;
  }
  return nullptr;
}

// ---- Module -------------------------------------------------------------------------------------

TEST(OpticsVerdict, HealthyModulePasses) {
  OpticsThresholds thresholds;
  thresholds.min_rx_power_dbm = -7.0;
  thresholds.max_module_temp_c = 70.0;
  const OpticsVerdict verdict = judge_optics(port_with(healthy_qsfp()), thresholds);
  EXPECT_TRUE(verdict.findings.empty());
  EXPECT_FALSE(verdict.failed());
}

TEST(OpticsVerdict, LowRxPowerNamesItsLane) {
  ModuleReading module = healthy_qsfp();
  module.lanes[1].rx_power_mw = 0.1047;  // -9.80 dBm: under the module's low warning, over its low alarm
  module.lanes[1].rx_power_dbm = -9.80;
  OpticsThresholds thresholds;
  thresholds.min_rx_power_dbm = -7.0;
  const OpticsVerdict verdict = judge_optics(port_with(module), thresholds);
  ASSERT_EQ(verdict.findings.size(), 1u);  // the profile's failure, not also the module's warning
  const OpticsFinding& finding = verdict.findings[0];
  EXPECT_EQ(finding.port, "host-a/ens1f0np0");
  EXPECT_THAT(finding.lane, Optional(2u));
  EXPECT_EQ(finding.what, OpticsMeasure::rx_power_dbm);
  EXPECT_EQ(finding.severity, OpticsSeverity::failure);
  EXPECT_EQ(finding.limit_source, OpticsLimitSource::profile);
  ASSERT_TRUE(finding.measured && finding.limit);
  EXPECT_NEAR(*finding.measured, -9.80, 0.005);
  EXPECT_NEAR(*finding.limit, -7.0, 1e-9);
  EXPECT_THAT(finding.text, HasSubstr("lane 2 RX power -9.80 dBm below -7.00 dBm: clean the fibre ends"));
  EXPECT_TRUE(verdict.failed());
}

TEST(OpticsVerdict, ModulesOwnLowWarningWithoutProfileThreshold) {
  ModuleReading module = healthy_qsfp();
  module.lanes[3].rx_power_mw = 0.1047;
  const OpticsVerdict verdict = judge_optics(port_with(module), OpticsThresholds{});
  ASSERT_EQ(verdict.findings.size(), 1u);
  const OpticsFinding& finding = verdict.findings[0];
  EXPECT_THAT(finding.lane, Optional(4u));
  EXPECT_EQ(finding.severity, OpticsSeverity::warning);
  EXPECT_EQ(finding.limit_source, OpticsLimitSource::module_threshold);
  ASSERT_TRUE(finding.limit);
  EXPECT_NEAR(*finding.limit, -8.40, 0.005);
  EXPECT_THAT(finding.text, HasSubstr("lane 4 RX power -9.80 dBm below the module's low warning -8.40 dBm"));
  EXPECT_FALSE(verdict.failed());
}

TEST(OpticsVerdict, NoLightFailsAgainstTheModulesLowAlarm) {
  ModuleReading module = healthy_qsfp();
  module.lanes[0].rx_power_mw = 0.0;
  module.lanes[0].rx_power_dbm.reset();
  const OpticsVerdict verdict = judge_optics(port_with(module), OpticsThresholds{});
  ASSERT_EQ(verdict.findings.size(), 1u);
  EXPECT_EQ(verdict.findings[0].severity, OpticsSeverity::failure);
  EXPECT_EQ(verdict.findings[0].measured, std::nullopt);
  EXPECT_THAT(verdict.findings[0].text, HasSubstr("lane 1 RX power 0 mW (no light) below the module's low alarm"));
}

TEST(OpticsVerdict, TemperatureAgainstProfileAndModule) {
  ModuleReading module = healthy_qsfp();
  module.temperature_c = 72.5;  // over the module's high warning (70), under its alarm (75)
  const OpticsVerdict own = judge_optics(port_with(module), OpticsThresholds{});
  ASSERT_EQ(own.findings.size(), 1u);
  EXPECT_EQ(own.findings[0].what, OpticsMeasure::temperature_c);
  EXPECT_EQ(own.findings[0].lane, std::nullopt);
  EXPECT_EQ(own.findings[0].severity, OpticsSeverity::warning);
  EXPECT_THAT(own.findings[0].text, HasSubstr("module temperature 72.5 °C above the module's high warning 70.0 °C"));

  OpticsThresholds thresholds;
  thresholds.max_module_temp_c = 65.0;
  const OpticsVerdict profile = judge_optics(port_with(module), thresholds);
  ASSERT_EQ(profile.findings.size(), 1u);
  EXPECT_EQ(profile.findings[0].severity, OpticsSeverity::failure);
  EXPECT_EQ(profile.findings[0].limit_source, OpticsLimitSource::profile);
  EXPECT_THAT(profile.findings[0].limit, Optional(65.0));
  EXPECT_THAT(profile.findings[0].text,
              HasSubstr("module temperature 72.5 °C above 65.0 °C: check the port's airflow"));
}

TEST(OpticsVerdict, ModulesOwnFlagIsAFinding) {
  ModuleReading module = healthy_qsfp();
  module.flags_raised.push_back({ModuleQuantity::tx_bias, ModuleLimit::high_alarm, 3u});
  module.flags_raised.push_back({ModuleQuantity::voltage, ModuleLimit::low_warning, std::nullopt});
  const OpticsVerdict verdict = judge_optics(port_with(module), OpticsThresholds{});
  ASSERT_EQ(verdict.findings.size(), 2u);
  const OpticsFinding* bias = finding_for(verdict, OpticsMeasure::tx_bias_ma, 3u);
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->severity, OpticsSeverity::failure);
  EXPECT_EQ(bias->limit_source, OpticsLimitSource::module_flag);
  EXPECT_THAT(bias->measured, Optional(6.8));
  EXPECT_THAT(bias->text, HasSubstr("lane 3 laser bias high alarm flag raised by the module (latched; now 6.80 mA)"));
  const OpticsFinding* voltage = finding_for(verdict, OpticsMeasure::voltage_v, std::nullopt);
  ASSERT_NE(voltage, nullptr);
  EXPECT_EQ(voltage->severity, OpticsSeverity::warning);
}

TEST(OpticsVerdict, ThresholdsAModuleLeavesAtZeroAreNotJudged) {
  ModuleReading module = healthy_qsfp();
  module.thresholds.rx_power_mw = {0.0, 0.0, 0.0, 0.0};
  module.thresholds.temperature_c = {};
  module.lanes[0].rx_power_mw = 5.0;
  EXPECT_TRUE(judge_optics(port_with(module), OpticsThresholds{}).findings.empty());
}

TEST(OpticsVerdict, ModulesWithoutDiagnosticsAndUnreadableOnes) {
  ModuleReading dac;
  dac.status = ModuleStatus::no_diagnostics;
  OpticsThresholds thresholds;
  thresholds.min_rx_power_dbm = -7.0;
  EXPECT_TRUE(judge_optics(port_with(dac), thresholds).findings.empty());

  ModuleReading unreadable;
  unreadable.note = "Cannot get Module EEPROM data: Input/output error";
  const OpticsVerdict verdict = judge_optics(port_with(unreadable), thresholds);
  ASSERT_EQ(verdict.findings.size(), 1u);
  EXPECT_EQ(verdict.findings[0].what, OpticsMeasure::module_diagnostics);
  EXPECT_EQ(verdict.findings[0].severity, OpticsSeverity::warning);
  EXPECT_THAT(verdict.findings[0].text, HasSubstr("Input/output error"));
}

// ---- FEC ----------------------------------------------------------------------------------------

TEST(OpticsVerdict, PreFecBerPerLaneFromCorrectedBlocksIsALowerBound) {
  OpticsPortReadings readings = port_with(healthy_qsfp());
  readings.fec_before = fec_sample(1000, {250, 250, 250, 250});
  readings.fec_after = fec_sample(1000 + 60 + 60 + 60 + 5000, {310, 310, 310, 5250});
  readings.bits_carried = 400'000'000'000;  // 1e11 bits per lane
  const OpticsVerdict verdict = judge_optics(readings, field_ber_preset());
  ASSERT_EQ(verdict.fec.pre_fec_lanes.size(), 4u);
  EXPECT_EQ(verdict.fec.pre_fec_lanes[3].bits, 100'000'000'000u);
  EXPECT_EQ(verdict.fec.pre_fec_lanes[3].errors, 5000u);
  EXPECT_DOUBLE_EQ(verdict.fec.pre_fec_lanes[3].rate, 5e-8);
  EXPECT_TRUE(verdict.fec.pre_fec_lanes[3].lower_bound());
  EXPECT_TRUE(verdict.findings.empty());  // 5e-8 is under the preset's warning

  readings.bits_carried = 40'000'000;  // 1e7 bits per lane: lane 3 at 5e-4
  const OpticsVerdict failing = judge_optics(readings, field_ber_preset());
  const OpticsFinding* lane3 = finding_for(failing, OpticsMeasure::pre_fec_ber, 3u);
  ASSERT_NE(lane3, nullptr);
  EXPECT_EQ(lane3->severity, OpticsSeverity::failure);
  EXPECT_THAT(lane3->limit, Optional(kFieldBerPreFecError));
  EXPECT_THAT(lane3->text, HasSubstr("FEC lane 3 pre-FEC BER at least 5.0e-04 (from corrected codewords, each one bit) "
                                     "above 1.0e-05"));
  const OpticsFinding* lane0 = finding_for(failing, OpticsMeasure::pre_fec_ber, 0u);
  ASSERT_NE(lane0, nullptr);  // 60 / 1e7 = 6e-6: over the warning, under the error
  EXPECT_EQ(lane0->severity, OpticsSeverity::warning);
}

TEST(OpticsVerdict, PreFecBerFromCorrectedBitsIsMeasured) {
  FecReading before = fec_sample(10, {});
  FecReading after = fec_sample(20, {});
  before.corrected_bits.total = 100;
  after.corrected_bits.total = 100 + 2'000;
  const FecErrorRates rates = fec_error_rates(before, after, 100'000'000);
  ASSERT_TRUE(rates.pre_fec_port);
  EXPECT_EQ(rates.pre_fec_port->basis, FecRateBasis::corrected_bits);
  EXPECT_FALSE(rates.pre_fec_port->lower_bound());
  EXPECT_DOUBLE_EQ(rates.pre_fec_port->rate, 2e-5);
  EXPECT_TRUE(rates.pre_fec_lanes.empty());

  OpticsPortReadings readings = port_with(healthy_qsfp());
  readings.fec_before = before;
  readings.fec_after = after;
  readings.bits_carried = 100'000'000;
  OpticsThresholds thresholds;
  thresholds.max_pre_fec_ber = 1e-5;
  const OpticsVerdict verdict = judge_optics(readings, thresholds);
  ASSERT_EQ(verdict.findings.size(), 1u);
  EXPECT_EQ(verdict.findings[0].lane, std::nullopt);
  EXPECT_THAT(verdict.findings[0].text, HasSubstr("port pre-FEC BER 2.0e-05 above 1.0e-05 (2000 in 100000000 bits)"));
}

TEST(OpticsVerdict, PreFecBerFromTheHistogram) {
  FecReading before = fec_sample(0, {});
  before.histogram = {{0, 0, 1000, {}}, {1, 3, 10, {}}, {4, 7, 0, {}}};
  FecReading after = before;
  after.histogram = {{0, 0, 5000, {}}, {1, 3, 110, {}}, {4, 7, 5, {}}};
  const FecErrorRates rates = fec_error_rates(before, after, 1'000'000);
  ASSERT_TRUE(rates.pre_fec_port);
  EXPECT_EQ(rates.pre_fec_port->basis, FecRateBasis::histogram_symbols);
  EXPECT_EQ(rates.pre_fec_port->errors, 100u * 1 + 5u * 4);  // each bin at its low end
  EXPECT_TRUE(rates.pre_fec_port->lower_bound());
}

TEST(OpticsVerdict, PostFecSymbolBer) {
  OpticsPortReadings readings = port_with(healthy_qsfp());
  readings.fec_before = fec_sample(0, {}, 10);
  readings.fec_after = fec_sample(0, {}, 13);
  readings.bits_carried = 1'000'000'000'000;
  const OpticsVerdict verdict = judge_optics(readings, field_ber_preset());
  const OpticsFinding* symbol = finding_for(verdict, OpticsMeasure::post_fec_symbol_ber, std::nullopt);
  ASSERT_NE(symbol, nullptr);
  EXPECT_EQ(symbol->severity, OpticsSeverity::failure);
  EXPECT_THAT(symbol->measured, Optional(3e-12));
  EXPECT_THAT(symbol->text, HasSubstr("post-FEC symbol BER at least 3.0e-12"));
}

TEST(OpticsVerdict, FecThatCannotBeJudgedSaysWhy) {
  OpticsPortReadings readings = port_with(healthy_qsfp());
  readings.fec_before = fec_sample(500, {});
  readings.fec_after = fec_sample(100, {});  // a reset
  readings.bits_carried = 1'000'000;
  const OpticsVerdict reset = judge_optics(readings, field_ber_preset());
  EXPECT_TRUE(reset.fec.counters_went_back);
  ASSERT_EQ(reset.findings.size(), 1u);
  EXPECT_EQ(reset.findings[0].what, OpticsMeasure::fec_counters);
  EXPECT_EQ(reset.findings[0].severity, OpticsSeverity::warning);
  EXPECT_THAT(reset.findings[0].text, HasSubstr("fell between the samples"));

  FecReading none;
  none.status = FecStatus::no_statistics;
  none.note = "netlink error: Operation not supported";
  readings.fec_before = none;
  readings.fec_after = none;
  const OpticsVerdict unsupported = judge_optics(readings, field_ber_preset());
  ASSERT_EQ(unsupported.findings.size(), 1u);
  EXPECT_THAT(unsupported.findings[0].text, HasSubstr("Operation not supported"));
  EXPECT_TRUE(judge_optics(readings, OpticsThresholds{}).findings.empty());  // nothing asked, nothing said
}

TEST(OpticsVerdict, NoFecReadingAtAllIsSaidLikeANicWithoutCounters) {
  // ethtool missing or timed out: the agent sends the module (or not) and no FEC sample.
  OpticsPortReadings readings = port_with(healthy_qsfp());
  readings.fec_after = fec_sample(100, {});
  readings.bits_carried = 1'000'000;
  const OpticsVerdict half = judge_optics(readings, field_ber_preset());
  ASSERT_EQ(half.findings.size(), 1u);
  EXPECT_EQ(half.findings[0].what, OpticsMeasure::fec_counters);
  EXPECT_EQ(half.findings[0].severity, OpticsSeverity::warning);
  EXPECT_THAT(half.findings[0].text, HasSubstr("FEC BER not judged: no FEC reading"));
  readings.fec_after.reset();
  EXPECT_EQ(judge_optics(readings, field_ber_preset()).findings.size(), 1u);
  EXPECT_TRUE(judge_optics(readings, OpticsThresholds{}).findings.empty());
}

// ---- The preset ---------------------------------------------------------------------------------

TEST(OpticsVerdict, FieldBerPreset) {
  const OpticsThresholds preset = field_ber_preset();
  EXPECT_THAT(preset.warn_pre_fec_ber, Optional(5e-6));
  EXPECT_THAT(preset.max_pre_fec_ber, Optional(1e-5));
  EXPECT_THAT(preset.warn_symbol_ber, Optional(5e-15));
  EXPECT_THAT(preset.max_symbol_ber, Optional(1e-14));
  EXPECT_EQ(preset.min_rx_power_dbm, std::nullopt);
  EXPECT_EQ(preset.max_module_temp_c, std::nullopt);
  EXPECT_EQ(kFieldBerPreFecNormal, 1e-6);
  EXPECT_EQ(kFieldBerSymbolNormal, 1e-15);
  EXPECT_THAT(std::string(kFieldBerSource), HasSubstr("NVIDIA"));
  EXPECT_EQ(optics_measure_name(OpticsMeasure::pre_fec_ber), "pre_fec_ber");
}

}  // namespace
}  // namespace tusk
