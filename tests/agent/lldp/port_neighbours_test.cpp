// Asking lldpd which switch port each of the agent's ports is cabled to, through a stand-in
// lldpcli (a script printing what lldpcli prints): the youngest of a port's neighbours is the one
// there now, a port lldpd heard nothing on and an lldpcli that fails are notes, never errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
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
    std::ofstream(script) << "#!/bin/sh\ncat '" << (dir_ / "out.json").string() << "'\n"
                          << (status ? "echo 'unable to connect to socket' >&2\n" : "") << "exit " << status << "\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    LldpcliSource source;
    source.program = script.string();
    return source;
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
  refresh_lldp_neighbours(inventory, printing(kMovedCable), engines, &notes);
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
  refresh_lldp_neighbours(inventory, printing(R"({"lldp": {}})"), engines, nullptr);
  EXPECT_TRUE(inventory.dpdk_ports(1).lldp().system_name().empty());
  EXPECT_FALSE(inventory.dpdk_ports(1).has_lldp());
  EXPECT_EQ(inventory.dpdk_ports(0).lldp().system_name(), "leaf3") << "the frames, when lldpd has none";
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
