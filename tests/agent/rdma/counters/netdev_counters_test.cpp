#include "agent/rdma/counters/netdev_counters.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace tusk::rdma {
namespace {

namespace fs = std::filesystem;

// A throw-away sysfs root laid out as the kernel does: class/infiniband/<dev>/ports/<n>/... and the
// PCI function's net/ directory under class/infiniband/<dev>/device/.
class PortNetdevTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    root_ = fs::temp_directory_path() /
            ("tusk-port-netdev-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path device_dir(const std::string& device) const { return root_ / "class" / "infiniband" / device; }
  fs::path port_dir(const std::string& device, int port) const {
    return device_dir(device) / "ports" / std::to_string(port);
  }
  static void write(const fs::path& path, const std::string& content) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << content;
  }

  fs::path root_;
};

TEST_F(PortNetdevTest, TheFirstSetGidEntryNamesTheNetdev) {
  write(port_dir("mlx5_0", 1) / "link_layer", "Ethernet\n");
  // Entry 0 unset (the kernel answers EINVAL; an empty file here), entries in index order, not name order.
  write(port_dir("mlx5_0", 1) / "gid_attrs" / "ndevs" / "0", "");
  write(port_dir("mlx5_0", 1) / "gid_attrs" / "ndevs" / "10", "other0\n");
  write(port_dir("mlx5_0", 1) / "gid_attrs" / "ndevs" / "2", "enp59s0f0np0\n");
  const auto netdev = find_port_netdev("mlx5_0", 1, root_);
  EXPECT_EQ(netdev.name, "enp59s0f0np0");
  EXPECT_EQ(netdev.why_none, "");
}

TEST_F(PortNetdevTest, WithoutGidAttributesThePciFunctionsNetdev) {
  write(port_dir("rxe0", 1) / "link_layer", "Ethernet\n");
  fs::create_directories(device_dir("rxe0") / "device" / "net" / "eth0");
  EXPECT_EQ(find_port_netdev("rxe0", 1, root_).name, "eth0");
}

TEST_F(PortNetdevTest, SeveralNetdevsOnOneFunctionAreToldApartByDevPort) {
  write(port_dir("mlx4_0", 2) / "link_layer", "Ethernet\n");
  write(device_dir("mlx4_0") / "device" / "net" / "eth2" / "dev_port", "0\n");
  write(device_dir("mlx4_0") / "device" / "net" / "eth3" / "dev_port", "1\n");
  EXPECT_EQ(find_port_netdev("mlx4_0", 2, root_).name, "eth3");
}

TEST_F(PortNetdevTest, NoNetdevIsAReasonNotAnError) {
  write(port_dir("mlx5_0", 1) / "link_layer", "Ethernet\n");
  const auto none = find_port_netdev("mlx5_0", 1, root_);
  EXPECT_EQ(none.name, "");
  EXPECT_NE(none.why_none.find("gid_attrs/ndevs"), std::string::npos) << none.why_none;

  write(port_dir("mlx5_1", 1) / "link_layer", "InfiniBand\n");
  fs::create_directories(device_dir("mlx5_1") / "device" / "net" / "ib0");
  EXPECT_NE(find_port_netdev("mlx5_1", 1, root_).why_none.find("InfiniBand"), std::string::npos);

  EXPECT_NE(find_port_netdev("mlx5_0", 7, root_).why_none.find("does not exist"), std::string::npos);
  EXPECT_EQ(find_port_netdev("../x", 1, root_).name, "");
}

TEST_F(PortNetdevTest, OpeningAPortWhoseNetdevIsGoneSaysWhichAndWhy) {
  write(port_dir("mlx5_0", 1) / "link_layer", "Ethernet\n");
  write(port_dir("mlx5_0", 1) / "gid_attrs" / "ndevs" / "0", "tusk-gone0\n");
  std::string why;
  EXPECT_EQ(open_port_netdev_counters("mlx5_0", 1, why, root_), nullptr);
  EXPECT_NE(why.find("mlx5_0 port 1"), std::string::npos) << why;
  EXPECT_NE(why.find("tusk-gone0"), std::string::npos) << why;
  EXPECT_NE(why.find("No such device"), std::string::npos) << why;
}

rdma::PortCounterSnapshot snapshot(rdma::CounterValues values) {
  rdma::PortCounterSnapshot out;
  out.values = std::move(values);
  return out;
}

TEST(NetdevCounterDelta, PauseTotalsAreMadeFromTheDeltas) {
  const auto before = snapshot({{"rx_pause_frames_prio3", 100}, {"tx_pause_frames_prio3", 50}, {"rx_discards", 9}});
  const auto after = snapshot({{"rx_pause_frames_prio3", 140}, {"tx_pause_frames_prio3", 80}, {"rx_discards", 9}});
  const auto delta = netdev_counter_delta(before, after);
  EXPECT_EQ(delta.values.at("rx_pause_frames"), 40u);
  EXPECT_EQ(delta.values.at("tx_pause_frames"), 30u);
  EXPECT_EQ(delta.values.at("pause_frames"), 70u);
  EXPECT_EQ(delta.values.at("rx_discards"), 0u);
}

TEST(NetdevCounterDelta, AFailedReadGivesNoDeltaRatherThanAnInventedOne) {
  const auto before = snapshot({{"rx_pause_frames_prio3", 100}});
  const auto delta = netdev_counter_delta(before, rdma::PortCounterSnapshot{});
  EXPECT_TRUE(delta.values.empty());
  EXPECT_EQ(delta.unpaired, (std::vector<std::string>{"rx_pause_frames_prio3"}));
}

TEST(MergeNetdevCounters, TheSysfsCountersComeFirst) {
  rdma::CounterValues stream{{"out_of_buffer", 1}, {"np_cnp_sent", 2}};
  merge_netdev_counters({{"out_of_buffer", 10}, {"pause_frames", 3}}, stream);
  EXPECT_EQ(stream.at("out_of_buffer"), 1u);
  EXPECT_EQ(stream.at("ethtool:out_of_buffer"), 10u);
  EXPECT_EQ(stream.at("pause_frames"), 3u);
  EXPECT_EQ(stream.at("np_cnp_sent"), 2u);
}

}  // namespace
}  // namespace tusk::rdma
