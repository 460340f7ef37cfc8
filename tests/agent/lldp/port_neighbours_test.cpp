// Asking lldpd which switch port each of the agent's ports is cabled to, through a stand-in
// lldpcli (a script printing what lldpcli prints): the youngest of a port's neighbours is the one
// there now, a port lldpd heard nothing on and an lldpcli that fails are notes, never errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "agent/inventory.hpp"
#include "agent/lldp/heard_neighbours.hpp"
#include "agent/lldp/port_neighbours.hpp"

namespace tusk::lldp {
namespace {

using ::testing::HasSubstr;

// After a cable moved from leaf1 to leaf2: lldpd still holds leaf1 (heard 90 s ago) beside leaf2
// (heard 3 s ago) on eth0.
constexpr const char* kMovedCable = R"({"lldp": {"interface": [
  {"eth0": {"via": "LLDP", "rid": "1", "age": "0 day, 00:01:30",
            "chassis": {"leaf1": {"id": {"type": "mac", "value": "02:00:00:00:00:01"}}},
            "port": {"id": {"type": "ifname", "value": "swp1"}, "ttl": "120"}}},
  {"eth0": {"via": "LLDP", "rid": "2", "age": "0 day, 00:00:03",
            "chassis": {"leaf2": {"id": {"type": "mac", "value": "02:00:00:00:00:02"}}},
            "port": {"id": {"type": "ifname", "value": "swp7"}, "ttl": "120"}}}
]}})";

class FakeLldpcli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tusk-lldpcli-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // A program that prints `output` and exits with `status`.
  LldpcliSource printing(const std::string& output, int status = 0) {
    std::ofstream(dir_ / "out.json") << output;
    const auto script = dir_ / "lldpcli";
    std::ofstream(script) << "#!/bin/sh\necho >> '" << (dir_ / "calls").string() << "'\ncat '"
                          << (dir_ / "out.json").string() << "'\n"
                          << (status ? "echo 'unable to connect to socket' >&2\n" : "") << "exit " << status << "\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    LldpcliSource source;
    source.program = script.string();
    return source;
  }
  // How many times the stand-in was run.
  std::size_t calls() const {
    std::ifstream in(dir_ / "calls");
    return static_cast<std::size_t>(std::count(std::istreambuf_iterator<char>(in), {}, '\n'));
  }
  std::filesystem::path dir_;
};

TEST_F(FakeLldpcli, TheYoungestNeighbourOfAPortIsTheOneThereNow) {
  const PortNeighbours found = read_port_neighbours(printing(kMovedCable), {"eth0", "eth1"});
  ASSERT_EQ(found.by_interface.count("eth0"), 1u);
  EXPECT_EQ(found.by_interface.at("eth0").system_name, "leaf2");
  EXPECT_EQ(found.by_interface.at("eth0").port_id, "swp7");
  EXPECT_EQ(found.by_interface.at("eth0").age_s, 3u);
  ASSERT_EQ(found.notes.size(), 1u);
  EXPECT_THAT(found.notes[0], HasSubstr("no LLDP neighbour on eth1"));
}

TEST_F(FakeLldpcli, AFailingLldpcliIsANote) {
  const PortNeighbours found = read_port_neighbours(printing("", 1), {"eth0"});
  EXPECT_TRUE(found.by_interface.empty());
  ASSERT_EQ(found.notes.size(), 1u);
  EXPECT_THAT(found.notes[0], HasSubstr("exit 1: unable to connect to socket"));
}

// Debian's lldpcli is for root and group adm: run by a user in neither (the systemd unit's _tusk
// before it joined them), the note says which groups and how.
TEST_F(FakeLldpcli, AnLldpcliThisUserMayNotRunSaysWhichGroupsRunIt) {
  LldpcliSource source = printing(kMovedCable);
  std::filesystem::permissions(source.program, std::filesystem::perms::owner_read);  // no x: even root may not run it
  const PortNeighbours found = read_port_neighbours(source, {"eth0"});
  EXPECT_TRUE(found.by_interface.empty());
  ASSERT_EQ(found.notes.size(), 1u);
  EXPECT_THAT(found.notes[0], HasSubstr("Permission denied"));
  EXPECT_THAT(found.notes[0], HasSubstr("adduser _tusk adm; adduser _tusk _lldpd"));
}

TEST_F(FakeLldpcli, OutputThatIsNotLldpcliSIsANote) {
  const PortNeighbours found = read_port_neighbours(printing("{\"lldp\": 5}"), {"eth0"});
  EXPECT_TRUE(found.by_interface.empty());
  ASSERT_EQ(found.notes.size(), 1u);
  EXPECT_THAT(found.notes[0], HasSubstr("no LLDP neighbours: "));
}

TEST_F(FakeLldpcli, EachPortsNeighbourIsLldpdsElseWhatItsOwnFramesSaidAndIsAskedAgainEachTime) {
  EngineCatalog engines;
  HeardNeighbours heard;
  LldpNeighbour leaf3;
  leaf3.system_name = "leaf3";
  leaf3.port_id = "swp9";
  leaf3.ttl_s = 120;
  heard.heard("0000:3b:00.1", leaf3);
  heard.heard("eth0-dpdk", leaf3);
  engines.heard_lldp = [&](const std::string& port) { return heard.neighbour(port); };
  proto::Inventory inventory;
  auto* kernel = inventory.add_dpdk_ports();  // af_packet on eth0: lldpd knows it, and it wins
  kernel->set_name("eth0-dpdk");
  kernel->set_netdev("eth0");
  inventory.add_dpdk_ports()->set_name("0000:3b:00.1");  // no kernel: its frames say
  inventory.add_dpdk_ports()->set_name("0000:3b:00.2");  // heard nothing
  std::vector<std::string> notes;
  const LldpcliSource moved = printing(kMovedCable);
  refresh_lldp_neighbours(inventory, &moved, engines, &notes);
  EXPECT_EQ(inventory.dpdk_ports(0).lldp().system_name(), "leaf2");
  EXPECT_EQ(inventory.dpdk_ports(0).lldp().source(), "lldpd");
  EXPECT_EQ(inventory.dpdk_ports(1).lldp().system_name(), "leaf3");
  EXPECT_EQ(inventory.dpdk_ports(1).lldp().port_id(), "swp9");
  EXPECT_EQ(inventory.dpdk_ports(1).lldp().source(), "frames");
  EXPECT_FALSE(inventory.dpdk_ports(2).has_lldp());
  EXPECT_TRUE(notes.empty());
  // The next registration: the frames' neighbour has gone (its shutdown LLDPDU), lldpd has none.
  leaf3.ttl_s = 0;
  heard.heard("0000:3b:00.1", leaf3);
  const LldpcliSource heard_none = printing(R"({"lldp": {}})");
  refresh_lldp_neighbours(inventory, &heard_none, engines, nullptr);
  EXPECT_TRUE(inventory.dpdk_ports(1).lldp().system_name().empty());
  EXPECT_FALSE(inventory.dpdk_ports(1).has_lldp());
  EXPECT_EQ(inventory.dpdk_ports(0).lldp().system_name(), "leaf3") << "the frames, when lldpd has none";

  // Not asking lldpd (it was just asked): its neighbour stays, and the frames are read again.
  const LldpcliSource asked = printing(kMovedCable);
  refresh_lldp_neighbours(inventory, &asked, engines, nullptr);
  const std::size_t asked_calls = calls();
  leaf3.ttl_s = 120;
  heard.heard("0000:3b:00.1", leaf3);
  refresh_lldp_neighbours(inventory, nullptr, engines, nullptr);
  EXPECT_EQ(calls(), asked_calls);
  EXPECT_EQ(inventory.dpdk_ports(0).lldp().system_name(), "leaf2");
  EXPECT_EQ(inventory.dpdk_ports(0).lldp().source(), "lldpd");
  EXPECT_EQ(inventory.dpdk_ports(1).lldp().system_name(), "leaf3");
  EXPECT_FALSE(inventory.dpdk_ports(2).has_lldp());
}

TEST_F(FakeLldpcli, AnRdmaPortsNeighbourIsWhatLldpdHeardOnItsNetdevAskedOnceWithTheDpdkPorts) {
  constexpr const char* kTwoPorts = R"({"lldp": {"interface": [
    {"eth0": {"via": "LLDP", "age": "0 day, 00:00:03", "chassis": {"leaf2": {"id": {"type": "mac", "value": "02:00:00:00:00:02"}}},
              "port": {"id": {"type": "ifname", "value": "swp7"}, "ttl": "120"}}},
    {"ens2f0np0": {"via": "LLDP", "age": "0 day, 00:00:09", "chassis": {"leaf4": {"id": {"type": "mac", "value": "02:00:00:00:00:04"}}},
                   "port": {"id": {"type": "mac", "value": "b8:ce:f6:00:00:31"}, "descr": "Ethernet31", "ttl": "120"}}}
  ]}})";
  EngineCatalog engines;
  HeardNeighbours heard;  // frames are a DPDK port's: an RDMA port's name is never asked for them
  LldpNeighbour elsewhere;
  elsewhere.system_name = "leaf9";
  elsewhere.ttl_s = 120;
  heard.heard("mlx5_1/1", elsewhere);
  engines.heard_lldp = [&](const std::string& port) { return heard.neighbour(port); };
  proto::Inventory inventory;
  auto* dpdk = inventory.add_dpdk_ports();
  dpdk->set_name("eth0-dpdk");
  dpdk->set_netdev("eth0");
  auto* device = inventory.add_rdma_devices();
  device->set_name("mlx5_0");
  auto* roce = device->add_ports();
  roce->set_port_num(1);
  roce->set_netdev("ens2f0np0");
  roce->set_roce_ipv4("10.1.4.11");
  auto* infiniband = device->add_ports();  // no netdev: nothing to ask
  infiniband->set_port_num(2);
  auto* quiet = inventory.add_rdma_devices()->add_ports();  // lldpd heard nothing on it
  inventory.mutable_rdma_devices(1)->set_name("mlx5_1");
  quiet->set_port_num(1);
  quiet->set_netdev("ens3f0np0");
  quiet->mutable_lldp()->set_system_name("stale");

  std::vector<std::string> notes;
  const LldpcliSource two_ports = printing(kTwoPorts);
  refresh_lldp_neighbours(inventory, &two_ports, engines, &notes);
  EXPECT_EQ(calls(), 1u) << "one lldpcli for every port";
  EXPECT_EQ(notes, (std::vector<std::string>{"no LLDP neighbour on ens3f0np0 (lldpd has heard none there)"}));
  EXPECT_EQ(inventory.dpdk_ports(0).lldp().system_name(), "leaf2");
  const auto& port = inventory.rdma_devices(0).ports(0);
  ASSERT_TRUE(port.has_lldp());
  EXPECT_EQ(port.lldp().system_name(), "leaf4");
  EXPECT_EQ(port.lldp().port_id(), "b8:ce:f6:00:00:31");
  EXPECT_EQ(port.lldp().port_description(), "Ethernet31");
  EXPECT_EQ(port.lldp().source(), "lldpd");
  EXPECT_FALSE(inventory.rdma_devices(0).ports(1).has_lldp());
  EXPECT_FALSE(inventory.rdma_devices(1).ports(0).has_lldp()) << "what it heard before is gone";

  // Without lldpd a RoCE port has no neighbour, and the note says why.
  notes.clear();
  const LldpcliSource failing = printing("", 1);
  refresh_lldp_neighbours(inventory, &failing, engines, &notes);
  EXPECT_FALSE(inventory.rdma_devices(0).ports(0).has_lldp());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("unable to connect to socket"));
}

TEST(HeardNeighbours, ANeighbourHeardIsKeptUntilItsTtlRunsOut) {
  HeardNeighbours heard;
  const auto t0 = HeardNeighbours::Clock::now();
  LldpNeighbour leaf;
  leaf.system_name = "leaf1";
  leaf.ttl_s = 4;
  heard.heard("p0", leaf, t0);
  EXPECT_EQ(heard.neighbour("p0", t0 + std::chrono::seconds(4)).value_or(LldpNeighbour{}).system_name, "leaf1");
  EXPECT_FALSE(heard.neighbour("p0", t0 + std::chrono::seconds(5)).has_value());
  EXPECT_FALSE(heard.neighbour("p1", t0).has_value());
  leaf.system_name = "leaf2";  // the cable moved: the last one heard is the one there now
  heard.heard("p0", leaf, t0 + std::chrono::seconds(6));
  EXPECT_EQ(heard.neighbour("p0", t0 + std::chrono::seconds(7)).value_or(LldpNeighbour{}).system_name, "leaf2");
}

TEST(PortNeighbours, NoPortAsksNothing) {
  LldpcliSource source;
  source.program = "/nonexistent/lldpcli";
  const PortNeighbours found = read_port_neighbours(source, {});
  EXPECT_TRUE(found.notes.empty());
}

}  // namespace
}  // namespace tusk::lldp
