// Adding an engine: a small engine descriptor that lives here, under tests/, is registered in the
// controller's engine table, and a profile for it loads, is checked and is planned, with no change
// to the loader, planner, printer, threshold catalog or TestSpec. Its profile keys, defaults, cross-
// field checks, plan completion, plan line, peer addresses and judged thresholds all come from the
// descriptor below.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "common/rates.hpp"
#include "common/units.hpp"
#include "controller/engines/engine_slice.hpp"
#include "controller/plan/planner.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/report/plan_printer.hpp"
#include "pulse_engine.pb.h"
#include "tests/support/yaml_errors.hpp"

namespace tusk {
namespace {

using namespace std::chrono_literals;
using profile_schema::store;
using profile_schema::TestDraft;
using profile_schema::TestKey;
using R = profile_schema::ReadContext;
using V = YamlValue;
using D = TestDraft;

// Kept in TestSpec::params as a plain struct: a slice chooses its own type.
struct PulseParams {
  std::uint32_t pulses = 10;
  std::uint64_t pulse_bytes = 1500;
};

PulseParams& params(TestSpec& spec) {
  return mutable_params_of<PulseParams>(spec);
}
const PulseParams& params(const TestSpec& spec) {
  return params_of<PulseParams>(spec);
}

const std::vector<TestKey>& pulse_keys() {
  static const std::vector<TestKey> rows{
      {"pulses", "pulse",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 1000, "1", "1000"}), d, [](D& t, auto n) { params(t.spec).pulses = n; });
       }},
      {"pulse_bytes", "pulse",
       [](R& c, const V& v, D& d) {
         return store(c.read.size(v, {1, 1 << 20, "1", "1MiB"}), d,
                      [](D& t, auto bytes) { params(t.spec).pulse_bytes = bytes; });
       }},
  };
  return rows;
}

double offered_bps(const TestSpec& spec) {
  const PulseParams& pulse = params(spec);
  const double seconds = std::chrono::duration<double>(spec.duration).count();
  return throughput_bps(static_cast<double>(pulse.pulses) * static_cast<double>(pulse.pulse_bytes), seconds);
}

const EngineSlice& pulse_slice() {
  static const EngineSlice engine{
      .name = "pulse",
      .article = "a",
      .keys = pulse_keys,
      .set_defaults = [](TestSpec& spec) { spec.params = PulseParams{}; },
      .check =
          [](profile_schema::TestCheck& check) {
            const double cap = check.profile.safety.max_rate_bps;
            if (cap > 0 && offered_bps(check.draft.spec) > cap) {
              check.fail(
                  "pulses", check.draft.origin("pulses"),
                  fmt::format("{} pulses are {}, above safety.max_rate {}", params(check.draft.spec).pulses,
                              units::format_bit_rate(offered_bps(check.draft.spec)), check.profile.max_rate_text));
            }
          },
      .complete_plan =
          [](const Profile&, const TestSpec& spec, std::size_t, proto::Plan& plan) {
            test::PulseTest pulse;
            pulse.set_pulses(params(spec).pulses);
            pulse.set_pulse_bytes(params(spec).pulse_bytes);
            pulse.set_offered_bps(offered_bps(spec));
            plan.mutable_other_params()->PackFrom(pulse);
          },
      .plan_line =
          [](const proto::Plan& plan) {
            test::PulseTest pulse;
            if (!plan.other_params().UnpackTo(&pulse)) return std::string("(no pulse parameters)");
            return fmt::format("{} pulses of {} | {}", pulse.pulses(), units::format_size(pulse.pulse_bytes()),
                               units::format_bit_rate(pulse.offered_bps()));
          },
      .data_plane_address = [](const proto::Inventory&, const proto::Inventory& to) { return to.hostname(); },
      .stream_kinds = {{"echo", {"throughput_bps", "lost_frames"}}},
      .thresholds = {"max_lost_frames", "min_throughput", "max_agents_lost"},
      .alternatives = {},
  };
  return engine;
}

// Registered for one test and taken out again, so no other test sees a third engine.
class EngineSliceTest : public ::testing::Test {
 protected:
  void SetUp() override { register_engine(pulse_slice()); }
  void TearDown() override { unregister_engine("pulse"); }
};

std::vector<std::string> load_errors(std::string_view yaml) {
  return testing::errors_thrown<ProfileInvalid>([&] { load_profile_text(testing::text_of(yaml), "pulse.yaml"); });
}

TEST_F(EngineSliceTest, AProfileForARegisteredEngineLoadsWithItsDefaultsAndKeysAndIsPlanned) {
  const Profile profile = load_profile_text(testing::text_of(R"(
name: pulses
agents: {hosts: [a, b, c, d]}
tests:
  - name: defaults
    engine: pulse
    duration: 10s
  - name: big
    engine: pulse
    duration: 2s
    topology: ring
    pulses: 100
    pulse_bytes: 64KiB
)"),
                                            "pulse.yaml");
  ASSERT_EQ(profile.tests.size(), 2u);
  EXPECT_EQ(params(profile.tests[0]).pulses, 10u);  // the descriptor's defaults
  EXPECT_EQ(params(profile.tests[0]).pulse_bytes, 1500u);
  EXPECT_EQ(params(profile.tests[1]).pulses, 100u);
  EXPECT_EQ(params(profile.tests[1]).pulse_bytes, 65536u);

  const auto plans = plan_test(profile, 1, {"a", "b", "c", "d"}, "run");
  ASSERT_EQ(plans.size(), 4u);
  for (const auto& agent : plans) {
    EXPECT_EQ(agent.plan.engine(), "pulse");
    ASSERT_EQ(agent.plan.peers_size(), 1) << agent.agent;  // a ring: each sends to the next
    test::PulseTest pulse;
    ASSERT_TRUE(agent.plan.other_params().UnpackTo(&pulse));
    EXPECT_EQ(pulse.pulses(), 100u);
    EXPECT_DOUBLE_EQ(pulse.offered_bps(), 100.0 * 65536 * 8 / 2);  // resolved once, in the plan
  }
  EXPECT_EQ(plans[0].plan.peers(0).agent_name(), "b");

  const std::string text = plan_text(profile, expand_plan(profile, {"a", "b", "c", "d"}, "run"));
  EXPECT_NE(text.find("test 1 'big': pulse engine"), std::string::npos) << text;
  EXPECT_NE(text.find("100 pulses of 64 KiB | 26.2 Mbit/s"), std::string::npos) << text;
  // The safe defaults it measures are judged at zero without a word in the profile.
  EXPECT_NE(text.find("max_lost_frames"), std::string::npos) << text;
}

TEST_F(EngineSliceTest, ItsKeysBelongToItsTestsAndItsChecksNameTheFieldAndLine) {
  EXPECT_EQ(testing::only_error(load_errors(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    pulses: 3
)")),
            "pulse.yaml:7:5: tests[0].pulses: pulses is a pulse key; this test's engine is dpdk");
  EXPECT_EQ(testing::only_error(load_errors(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: pulse
    duration: 1s
    frame_size: 64
)")),
            "pulse.yaml:7:5: tests[0].frame_size: frame_size is a dpdk key; this test's engine is pulse");
  EXPECT_EQ(testing::only_error(load_errors(R"(
name: x
agents: {count: 2}
safety: {max_rate: 1Mbps}
tests:
  - name: t
    engine: pulse
    duration: 1s
    pulses: 1000
)")),
            "pulse.yaml:8:13: tests[0].pulses: 1000 pulses are 12.0 Mbit/s, above safety.max_rate 1Mbps");
}

TEST_F(EngineSliceTest, AThresholdItDoesNotMeasureIsRefused) {
  const auto errors = load_errors(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: pulse
    duration: 1s
    thresholds: {max_ber: 1e-12}
)");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("max_ber"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("pulse"), std::string::npos) << errors[0];
}

TEST_F(EngineSliceTest, ANameCanBeRegisteredOnce) {
  EXPECT_THROW(register_engine(pulse_slice()), std::invalid_argument);
  EngineSlice impostor = pulse_slice();
  impostor.name = "dpdk";
  EXPECT_THROW(register_engine(impostor), std::invalid_argument);
}

}  // namespace
}  // namespace tusk
