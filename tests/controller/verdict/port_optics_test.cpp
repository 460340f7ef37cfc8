// A profile's `optics:` block as the loader reads it, and a test's ports' optics as the controller
// judges what its agents sent (TestResult.optics): the thresholds in force, the bits a BER divides
// by, bounds on a hostile agent's message, and a method's steps' ports kept once each.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/optics_wire.hpp"
#include "controller/plan/planner.hpp"
#include "controller/run/peer_texts.hpp"
#include "controller/run/test_judgement.hpp"
#include "controller/verdict/port_optics.hpp"
#include "tests/support/profile_text.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;
using testing::load_profile_yaml;
using ::testing::Optional;
using testing::profile_error;
using testing::profile_errors;

constexpr std::string_view kOpticsHead = R"(
name: p
agents: {hosts: [a, b]}
)";
constexpr std::string_view kOpticsTests = R"(tests:
  - {name: t, engine: dpdk, duration: 2s}
)";

Profile with_optics(std::string_view block) {
  return load_profile_yaml(std::string(kOpticsHead) + std::string(block) + std::string(kOpticsTests));
}

std::string optics_error(std::string_view block) {
  return profile_error(std::string(kOpticsHead) + std::string(block) + std::string(kOpticsTests));
}

TEST(OpticsProfile, ReadByDefaultWithNoThresholdOfItsOwn) {
  const Profile profile = with_optics("");
  const OpticsSettings& optics = profile.tests.at(0).optics;
  EXPECT_TRUE(optics.read);
  EXPECT_EQ(optics.preset, OpticsPreset::none);
  const OpticsThresholds in_force = optics_thresholds(optics);
  EXPECT_FALSE(in_force.max_pre_fec_ber || in_force.warn_pre_fec_ber || in_force.max_symbol_ber ||
               in_force.min_rx_power_dbm || in_force.max_module_temp_c);
}

TEST(OpticsProfile, ThePresetsThresholdsWithTheProfilesOwnOverThem) {
  const Profile profile = with_optics(R"(optics:
  preset: field-ber
  max_pre_fec_ber: 2e-5
  min_rx_power_dbm: -7.5
  max_module_temp_c: 70
)");
  const OpticsThresholds in_force = optics_thresholds(profile.tests.at(0).optics);
  EXPECT_THAT(in_force.max_pre_fec_ber, Optional(2e-5)) << "the profile's own replaces the preset's 1e-5";
  EXPECT_THAT(in_force.warn_pre_fec_ber, Optional(5e-6));
  EXPECT_THAT(in_force.max_symbol_ber, Optional(1e-14));
  EXPECT_THAT(in_force.warn_symbol_ber, Optional(5e-15));
  EXPECT_THAT(in_force.min_rx_power_dbm, Optional(-7.5));
  EXPECT_THAT(in_force.max_module_temp_c, Optional(70.0));
}

TEST(OpticsProfile, ThePlanAsksTheAgentsToReadThemUnlessTheProfileSaysNot) {
  for (const bool read : {true, false}) {
    const Profile profile = with_optics(read ? "" : "optics: {read: false}\n");
    const auto plans = plan_test(profile, 0, {"a", "b"}, "run-1");
    ASSERT_EQ(plans.size(), 2u);
    for (const auto& plan : plans) {
      EXPECT_EQ(plan.plan.read_optics(), read);
      EXPECT_EQ(plan.plan.optics_interval_ms(), read ? 60'000u : 0u) << "every minute by default";
    }
  }
  for (const auto& [block, ms] : std::vector<std::pair<std::string, std::uint32_t>>{{"optics: {interval: 5s}\n", 5000},
                                                                                    {"optics: {interval: 0}\n", 0}}) {
    const auto plans = plan_test(with_optics(block), 0, {"a", "b"}, "run-1");
    EXPECT_EQ(plans.at(0).plan.optics_interval_ms(), ms) << block;
  }
}

TEST(OpticsProfile, BadValuesAreNamedByFileLineAndKey) {
  EXPECT_EQ(optics_error("optics:\n  min_rx_power_dbm: -50\n"),
            "bad.yaml:4:21: optics.min_rx_power_dbm: min_rx_power_dbm -50 is below the minimum -40");
  EXPECT_EQ(optics_error("optics:\n  max_pre_fec_ber: 1e-5x\n"),
            "bad.yaml:4:20: optics.max_pre_fec_ber: expected a number like -7.5, got '1e-5x'");
  EXPECT_EQ(optics_error("optics:\n  interval: 500ms\n"),
            "bad.yaml:4:13: optics.interval: interval: at least 1s (ethtool reads the module over a slow bus), or 0 "
            "for none");
  EXPECT_THAT(optics_error("optics:\n  interval: 25h\n"), HasSubstr("bad.yaml:4:13: optics.interval:"));
  EXPECT_EQ(optics_error("optics:\n  preset: field\n"),
            "bad.yaml:4:11: optics.preset: 'field' is not one of none, field-ber");
  EXPECT_THAT(optics_error("optics:\n  max_temp: 70\n"), HasSubstr("bad.yaml:4:3: optics.max_temp: unknown key"));
  EXPECT_EQ(optics_error("optics:\n  read: false\n  max_module_temp_c: 70\n"),
            "bad.yaml:5:22: optics.max_module_temp_c: optics thresholds need the optics read: remove read: false, "
            "or the thresholds");
  EXPECT_EQ(optics_error("optics:\n  max_pre_fec_ber: 1e-6\n  warn_pre_fec_ber: 1e-5\n"),
            "bad.yaml:5:21: optics.warn_pre_fec_ber: warn_pre_fec_ber 1e-05 is above max_pre_fec_ber 1e-06: a "
            "warning comes before the failure");
}

// ---- one port, as an agent sent it ---------------------------------------------------------------

FecReading fec_with(std::uint64_t corrected, std::uint64_t uncorrectable) {
  FecReading fec;
  fec.status = FecStatus::statistics;
  fec.active = FecMode::rs;
  fec.corrected_blocks.total = corrected;
  fec.uncorrectable_blocks.total = uncorrectable;
  return fec;
}

proto::PortOptics port_message(std::uint64_t corrected_before, std::uint64_t corrected_after) {
  proto::PortOptics port;
  port.set_port("0000:3b:00.0");
  port.set_netdev("ens1f0");
  to_proto(fec_with(corrected_before, 0), *port.mutable_fec_before());
  to_proto(fec_with(corrected_after, 0), *port.mutable_fec_after());
  ModuleReading module;
  module.status = ModuleStatus::diagnostics;
  module.temperature_c = 41.5;
  module.lanes.resize(4);
  for (auto& lane : module.lanes) lane.rx_power_dbm = -2.0;
  module.lanes[1].rx_power_dbm = -11.2;
  to_proto(module, *port.mutable_module());
  return port;
}

const OpticsFinding* finding_of(const PortOpticsOutcome& port, OpticsMeasure what) {
  for (const auto& finding : port.verdict.findings) {
    if (finding.what == what) return &finding;
  }
  return nullptr;
}

TEST(PortOptics, ABerDividesByTheLineRateOverTheIntervalWhereTheSpeedIsKnown) {
  proto::PortOptics message = port_message(1000, 1000 + 3'000'000);
  message.set_speed_mbps(100'000);
  message.set_interval_ns(10'000'000'000);  // 10 s at 100 Gb/s: 1e12 bits
  message.set_rx_bytes(1'000);              // ignored: the line carried idles too
  OpticsThresholds thresholds;
  thresholds.max_pre_fec_ber = 1e-6;
  const PortOpticsOutcome port = judge_port_optics("h1", message, thresholds);
  EXPECT_TRUE(port.bits_from_line_rate);
  EXPECT_EQ(port.bits_carried, 1'000'000'000'000u);
  ASSERT_TRUE(port.verdict.fec.pre_fec_port);
  EXPECT_DOUBLE_EQ(port.verdict.fec.pre_fec_port->rate, 3e-6);
  const OpticsFinding* ber = finding_of(port, OpticsMeasure::pre_fec_ber);
  ASSERT_NE(ber, nullptr);
  EXPECT_EQ(ber->severity, OpticsSeverity::failure);
  EXPECT_EQ(port_optics_title(port), "h1 ens1f0 (0000:3b:00.0)");
  EXPECT_EQ(finding_of(port, OpticsMeasure::rx_power_dbm), nullptr) << "no RX power threshold was set";
}

TEST(PortOptics, WithoutASpeedTheBitsAreThoseReceivedAndTheBerIsOverstatedNotUnderstated) {
  proto::PortOptics message = port_message(0, 50);
  message.set_rx_bytes(1'000'000);  // 8e6 bits
  message.set_interval_ns(2'000'000'000);
  OpticsThresholds thresholds;
  thresholds.min_rx_power_dbm = -10;
  const PortOpticsOutcome port = judge_port_optics("h1", message, thresholds);
  EXPECT_FALSE(port.bits_from_line_rate);
  EXPECT_EQ(port.bits_carried, 8'000'000u);
  ASSERT_TRUE(port.verdict.fec.pre_fec_port);
  EXPECT_DOUBLE_EQ(port.verdict.fec.pre_fec_port->rate, 50 / 8e6);
  const OpticsFinding* rx = finding_of(port, OpticsMeasure::rx_power_dbm);
  ASSERT_NE(rx, nullptr);
  EXPECT_THAT(rx->lane, Optional(2u));
  EXPECT_EQ(rx->severity, OpticsSeverity::failure);
}

TEST(PortOptics, AHostileAgentsPortIsBoundedAndNeverJudgedOnNonsense) {
  proto::PortOptics message = port_message(0, 10);
  message.set_port(std::string(100'000, 'p') + "\x1b[2J");
  message.set_netdev("eth0\n2026 controller: all passed");
  message.set_speed_mbps(4'000'000'000u);      // not a port's speed: ignored
  message.set_interval_ns(~std::uint64_t{0});  // not a test's interval
  message.set_rx_bytes(~std::uint64_t{0});     // bits would overflow: none
  message.mutable_module()->mutable_lanes()->Clear();
  for (int i = 0; i < 10'000; ++i) message.mutable_module()->add_lanes()->set_rx_power_dbm(-3);
  make_peer_texts_safe(message);  // as every agent message arrives (AgentRegistry)
  const PortOpticsOutcome port = judge_port_optics("h1", message, {});
  EXPECT_LE(port.port.size(), 128u);
  EXPECT_EQ(port.netdev.find('\n'), std::string::npos);
  EXPECT_FALSE(port.bits_from_line_rate);
  EXPECT_EQ(port.bits_carried, 0u);
  EXPECT_FALSE(port.verdict.fec.pre_fec_port) << "nothing is rated without bits";
  ASSERT_TRUE(port.module);
  EXPECT_EQ(port.module->lanes.size(), kMaxOpticsLanes);
  EXPECT_TRUE(port.module->lanes_dropped);
}

TEST(PortOptics, TheSummaryCountsWhatWasReadAndNamesTheFailingPorts) {
  OpticsThresholds thresholds;
  thresholds.min_rx_power_dbm = -10;
  std::vector<PortOpticsOutcome> ports;
  ports.push_back(judge_port_optics("h1", port_message(0, 0), thresholds));
  proto::PortOptics bare;
  bare.set_port("p0");
  bare.set_netdev("p0");
  bare.set_note("ethtool: not found on PATH");
  ports.push_back(judge_port_optics("h2", bare, thresholds));
  EXPECT_EQ(optics_summary_text(ports),
            "optics: 2 ports read, 1 with module diagnostics, 1 with FEC counters; 1 failing (h1 ens1f0 "
            "(0000:3b:00.0))");
  EXPECT_EQ(port_optics_title(ports[1]), "h2 p0");
  EXPECT_EQ(ports[1].note, "ethtool: not found on PATH");
}

// ---- a test's agents' results, judged -------------------------------------------------------------

TEST(PortOptics, AFailingPortFailsTheTestAndNamesItsLaneAWarningWarns) {
  TestOutcome test;
  test.spec = with_optics("optics: {min_rx_power_dbm: -10}\n").tests.at(0);
  test.agents = {"a"};
  proto::TestResult result;
  result.set_completed(true);
  *result.add_optics() = port_message(0, 0);
  // A module whose temperature passed its own high warning threshold.
  proto::PortOptics warm = port_message(0, 0);
  warm.set_port("p1");
  warm.set_netdev("ens1f1");
  ModuleReading module = module_from_proto(warm.module());
  module.lanes.clear();
  module.thresholds.temperature_c.high_warning = 40;
  module.thresholds.temperature_c.low_warning = 0;
  to_proto(module, *warm.mutable_module());
  *result.add_optics() = warm;
  test.per_agent["a"].result = result;
  judge_test(test, nullptr);
  ASSERT_EQ(test.optics.size(), 2u);
  EXPECT_EQ(test.verdict, TestVerdict::Fail);
  ASSERT_EQ(test.problems.size(), 1u) << ::testing::PrintToString(test.problems);
  EXPECT_THAT(test.problems[0], HasSubstr("a ens1f0 (0000:3b:00.0): optics: "));
  EXPECT_THAT(test.problems[0], HasSubstr("lane 2"));
  bool warned = false;
  for (const auto& warning : test.warnings) warned |= warning.find("a ens1f1 (p1): optics: ") != std::string::npos;
  EXPECT_TRUE(warned) << ::testing::PrintToString(test.warnings);
}

TEST(PortOptics, AMethodKeepsEachPortOnceAsItsLastFailingStepReadItAndNoSwitchReading) {
  OpticsThresholds thresholds;
  thresholds.min_rx_power_dbm = -10;
  proto::PortOptics clean = port_message(0, 0);
  clean.mutable_module()->mutable_lanes(1)->set_rx_power_dbm(-3);
  std::vector<TestOutcome> steps(3);
  steps[0].optics.push_back(judge_port_optics("a", clean, thresholds));
  steps[1].optics.push_back(judge_port_optics("a", port_message(0, 0), thresholds));  // lane 2 dark
  steps[2].optics.push_back(judge_port_optics("a", clean, thresholds));
  steps[2].optics.push_back(judge_port_optics("b", clean, thresholds));
  for (auto& step : steps) step.switches_before.resize(3);
  steps[1].switches_after.resize(3);
  TestOutcome test;
  fold_step_evidence(test, steps);
  ASSERT_EQ(test.optics.size(), 2u);
  EXPECT_EQ(test.optics[0].agent, "a");
  EXPECT_TRUE(test.optics[0].verdict.failed()) << "step 2's failing reading, not step 3's clean one";
  EXPECT_EQ(test.optics[1].agent, "b");
  for (const auto& step : steps) {
    EXPECT_TRUE(step.optics.empty());
    EXPECT_TRUE(step.switches_before.empty() && step.switches_after.empty()) << "counted already: let go";
  }
}

}  // namespace
}  // namespace tusk
