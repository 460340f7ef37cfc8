// --rdma-device: the devices an agent offers are only those named, and a name found nowhere is
// noted with the devices there are.
#include <gtest/gtest.h>

#include "agent/rdma/discovery.hpp"

namespace tusk::rdma {
namespace {

Discovery two_devices() {
  Discovery discovery;
  discovery.devices.emplace_back().set_name("mlx5_0");
  discovery.devices.emplace_back().set_name("mlx5_1");
  return discovery;
}

TEST(RdmaDeviceFilter, NoFilterKeepsEveryDevice) {
  auto discovery = two_devices();
  keep_allowed_devices(discovery, {});
  EXPECT_EQ(discovery.devices.size(), 2u);
  EXPECT_TRUE(discovery.notes.empty());
}

TEST(RdmaDeviceFilter, KeepsOnlyTheNamedDevices) {
  auto discovery = two_devices();
  keep_allowed_devices(discovery, {"mlx5_1"});
  ASSERT_EQ(discovery.devices.size(), 1u);
  EXPECT_EQ(discovery.devices[0].name(), "mlx5_1");
  EXPECT_TRUE(discovery.notes.empty());
}

TEST(RdmaDeviceFilter, KeepsTheOrderTheyAreNamedInWhichIsTheRailOrderOnce) {
  auto discovery = two_devices();
  keep_allowed_devices(discovery, {"mlx5_1", "mlx5_0", "mlx5_1"});
  ASSERT_EQ(discovery.devices.size(), 2u);
  EXPECT_EQ(discovery.devices[0].name(), "mlx5_1");
  EXPECT_EQ(discovery.devices[1].name(), "mlx5_0");
}

TEST(RdmaDeviceFilter, ANameFoundNowhereIsNotedWithTheDevicesThereAre) {
  auto discovery = two_devices();
  keep_allowed_devices(discovery, {"mlx5_0", "rxe0"});
  ASSERT_EQ(discovery.devices.size(), 1u);
  ASSERT_EQ(discovery.notes.size(), 1u);
  EXPECT_EQ(discovery.notes[0], "--rdma-device rxe0: no such device (found: mlx5_0, mlx5_1)");
  Discovery none;
  keep_allowed_devices(none, {"mlx5_0"});
  EXPECT_EQ(none.notes.at(0), "--rdma-device mlx5_0: no such device (found: none)");
}

}  // namespace
}  // namespace tusk::rdma
