// A test's `localisation:` key: the noise floor read, its defaults, and bad values refused by line.
#include <gtest/gtest.h>

#include <string>

#include "controller/profile/profile_loader.hpp"
#include "tests/support/profile_text.hpp"

namespace tusk {
namespace {

using testing::load_profile_yaml;
using testing::profile_error;

std::string with_test_line(const std::string& line) {
  return "\nname: x\nagents: {count: 2}\ntests:\n  - name: t\n    engine: dpdk\n    duration: 1s\n    " + line + "\n";
}

TEST(LocalisationKeys, ATestWithoutTheKeyHasTheDocumentedFloors) {
  const Profile profile = load_profile_yaml(with_test_line("rate: 1Mpps"));
  EXPECT_DOUBLE_EQ(profile.tests.at(0).localisation.min_rate.loss, 1e-6);
  EXPECT_DOUBLE_EQ(profile.tests.at(0).localisation.min_rate.damage, 1e-8);
}

TEST(LocalisationKeys, FloorsAreReadAsRatiosAndZeroNamesEveryLink) {
  const Profile profile = load_profile_yaml(with_test_line("localisation: {min_rate: {loss: 0.001%, damage: 0}}"));
  EXPECT_DOUBLE_EQ(profile.tests.at(0).localisation.min_rate.loss, 1e-5);
  EXPECT_DOUBLE_EQ(profile.tests.at(0).localisation.min_rate.damage, 0.0);
}

TEST(LocalisationKeys, ATestThatSetsTheKeySetsItWholeOverDefaults) {
  const Profile profile = load_profile_yaml(R"(
name: x
agents: {count: 2}
defaults:
  localisation: {min_rate: {loss: 1e-4, damage: 1e-4}}
tests:
  - {name: inherits, engine: dpdk, duration: 1s}
  - {name: own, engine: dpdk, duration: 1s, localisation: {min_rate: {loss: 1e-7}}}
)");
  EXPECT_DOUBLE_EQ(profile.tests.at(0).localisation.min_rate.loss, 1e-4);
  EXPECT_DOUBLE_EQ(profile.tests.at(0).localisation.min_rate.damage, 1e-4);
  EXPECT_DOUBLE_EQ(profile.tests.at(1).localisation.min_rate.loss, 1e-7);
  EXPECT_DOUBLE_EQ(profile.tests.at(1).localisation.min_rate.damage, NoiseFloor::kDefaultDamage);
}

TEST(LocalisationKeys, AFloorOutOfRangeOrAnUnknownKeyIsRefusedByLineAndField) {
  EXPECT_EQ(profile_error(with_test_line("localisation: {min_rate: {loss: 2%}}")),
            "bad.yaml:7:37: tests[0].localisation.min_rate.loss: loss 2% must be 0..1 % of the frames that cross a "
            "link (e.g. 1e-6 or 0.0001%)");
  EXPECT_EQ(profile_error(with_test_line("localisation: {min_rate: {loss: -1e-6}}")).substr(0, 52),
            "bad.yaml:7:37: tests[0].localisation.min_rate.loss: ");
  EXPECT_NE(profile_error(with_test_line("localisation: {min_rate: {los: 1e-6}}")).find("did you mean 'loss'"),
            std::string::npos);
  EXPECT_NE(profile_error(with_test_line("localisation: {floor: 1e-6}")).find("localisation.floor"), std::string::npos);
  EXPECT_NE(profile_error(with_test_line("localisation: {min_rate: 1e-6}")).find("a mapping with loss or damage"),
            std::string::npos);
}

// The delay a link may add and not be named: 10 us unless the test says, a duration to 1 s.
TEST(LocalisationKeys, MinDelayIsADurationUpToASecondAndADelayPastItIsRefusedByLine) {
  EXPECT_DOUBLE_EQ(load_profile_yaml(with_test_line("rate: 1Mpps")).tests.at(0).localisation.min_rate.delay_ns, 10'000);
  EXPECT_DOUBLE_EQ(
      load_profile_yaml(with_test_line("localisation: {min_delay: 250us}")).tests.at(0).localisation.min_rate.delay_ns,
      250'000);
  EXPECT_DOUBLE_EQ(
      load_profile_yaml(with_test_line("localisation: {min_delay: 0}")).tests.at(0).localisation.min_rate.delay_ns, 0);
  EXPECT_EQ(profile_error(with_test_line("localisation: {min_delay: 2s}")),
            "bad.yaml:7:31: tests[0].localisation.min_delay: min_delay 2s must be a delay of 0 to 1s (e.g. 10us)");
  EXPECT_NE(profile_error(with_test_line("localisation: {min_delay: soon}")).find("tests[0].localisation.min_delay"),
            std::string::npos);
}

}  // namespace
}  // namespace tusk
