// `plan --inventory` (issue 61): each agent's plan held to the check rates its own cores measured,
// a warning naming the agent and the sample that would fit where checking would take half its
// cores or more; what each receiver is asked comes from its senders' plans (a mesh's receiver gets
// one sender's rate in all, an incast's every sender's).
#include "controller/plan/check_loads.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "controller/profile/profile_loader.hpp"
#include "controller/report/plan_printer.hpp"

namespace tusk {
namespace {

// An agent with one 400G RoCE port that checks 40 GB/s of 4 KiB messages and 60 GB/s of 64 KiB,
// and one 100G DPDK port of `queues` queues whose core checks 10 GB/s of frames.
proto::Inventory measured_agent(std::uint32_t queues = 1) {
  proto::Inventory inventory;
  auto* device = inventory.add_rdma_devices();
  device->set_name("mlx5_0");
  auto* port = device->add_ports();
  port->set_port_num(1);
  port->set_speed_gbps(400);
  auto* dpdk = inventory.add_dpdk_ports();
  dpdk->set_name("0000:17:00.0");
  dpdk->set_queues(queues);
  dpdk->set_speed_mbps(100'000);
  auto* rates = inventory.mutable_check_rates();
  auto* small = rates->add_rdma();
  small->set_message_size(4096);
  small->set_bytes_per_s(40e9);
  auto* large = rates->add_rdma();
  large->set_message_size(65536);
  large->set_bytes_per_s(60e9);
  rates->set_dpdk_frame_bytes_per_s(10e9);
  return inventory;
}

std::map<std::string, proto::Inventory> every_agent(const std::vector<std::string>& names,
                                                    const proto::Inventory& inventory) {
  std::map<std::string, proto::Inventory> out;
  for (const auto& name : names) out[name] = inventory;
  return out;
}

std::vector<CheckLoadWarning> warnings_of(const std::string& test_text, const std::vector<std::string>& agents,
                                          const std::map<std::string, proto::Inventory>& inventories) {
  const Profile profile = load_profile_text(
      "name: loads\nagents:\n  count: " + std::to_string(agents.size()) + "\ntests:\n" + test_text, "loads.yaml");
  return check_loads(expand_plan(profile, agents, "plan-only").tests, inventories);
}

std::string agents_warned(const std::vector<CheckLoadWarning>& warnings) {
  std::string out;
  for (const auto& warning : warnings) out += (out.empty() ? "" : ",") + warning.agent;
  return out;
}

TEST(CheckLoads, AReceiverWhoseCoreCannotCheckItsPortIsWarnedWithTheSampleThatWouldFit) {
  const std::string unpaced =
      "  - name: checked\n    engine: rdma\n    topology: pairs\n    duration: 5s\n    message_size: 4KiB\n";
  const auto warnings = warnings_of(unpaced, {"a", "b"}, every_agent({"a", "b"}, measured_agent()));
  // pairs: a and b each write to the other; a 400G port is 50 GB/s, 1.25 of a 40 GB/s core.
  ASSERT_EQ(agents_warned(warnings), "a,b");
  EXPECT_NE(warnings[0].text.find("it may receive 50.00 GB/s (mlx5_0/1 at 400 Gb/s) and one of its cores checks "
                                  "40.00 GB/s of 4096 B messages"),
            std::string::npos)
      << warnings[0].text;
  EXPECT_NE(warnings[0].text.find("checking every payload would take about 125 % of its RDMA datapath thread"),
            std::string::npos)
      << warnings[0].text;
  EXPECT_NE(warnings[0].text.find("check_every: 5 would check one message in 5"), std::string::npos)
      << warnings[0].text;
  // The sample it advises fits; 64 KiB messages are checked at the 64 KiB rate (0.83: still said).
  EXPECT_TRUE(
      warnings_of(unpaced + "    check_every: 5\n", {"a", "b"}, every_agent({"a", "b"}, measured_agent())).empty());
  const auto large = warnings_of(
      "  - name: checked\n    engine: rdma\n    topology: pairs\n    duration: 5s\n    message_size: 64KiB\n",
      {"a", "b"}, every_agent({"a", "b"}, measured_agent()));
  ASSERT_EQ(large.size(), 2u);
  EXPECT_NE(large[0].text.find("60.00 GB/s of 65536 B messages"), std::string::npos) << large[0].text;
  EXPECT_NE(large[0].text.find("about 83 %"), std::string::npos) << large[0].text;
  // Unchecked traffic asks nothing of the core.
  EXPECT_TRUE(
      warnings_of(unpaced + "    data_check: false\n", {"a", "b"}, every_agent({"a", "b"}, measured_agent())).empty());
  // Nor does an agent the inventory file does not hold, or one that measured nothing.
  EXPECT_EQ(agents_warned(warnings_of(unpaced, {"a", "b"}, every_agent({"b"}, measured_agent()))), "b");
  proto::Inventory unmeasured = measured_agent();
  unmeasured.clear_check_rates();
  EXPECT_TRUE(warnings_of(unpaced, {"a", "b"}, every_agent({"a", "b"}, unmeasured)).empty());
}

TEST(CheckLoads, AMeshReceiverGetsOneSendersRateAndAnIncastReceiverGetsEverySenders) {
  const std::vector<std::string> four{"a", "b", "c", "d"};
  // Each of four agents sends 320 Gb/s, a third to each peer: each receives 40 GB/s in all.
  const auto mesh = warnings_of(
      "  - name: mesh\n    engine: rdma\n    topology: mesh\n    duration: 5s\n    message_size: 64KiB\n"
      "    rate: 320Gbps\n",
      four, every_agent(four, measured_agent()));
  ASSERT_EQ(agents_warned(mesh), "a,b,c,d");
  EXPECT_NE(mesh[0].text.find("it may receive 40.00 GB/s (3 senders asking 320 Gb/s in all)"), std::string::npos)
      << mesh[0].text;
  EXPECT_NE(mesh[0].text.find("about 67 %"), std::string::npos) << mesh[0].text;
  // Three senders at 100 Gb/s into one: 37.5 GB/s for a, nothing for the senders; at 40 Gb/s each
  // (15 GB/s, a quarter of its core) nobody is warned.
  const std::string incast =
      "  - name: incast\n    engine: rdma\n    topology: incast\n    duration: 5s\n    message_size: 64KiB\n";
  const auto fast = warnings_of(incast + "    rate: 100Gbps\n", four, every_agent(four, measured_agent()));
  ASSERT_EQ(agents_warned(fast), "a");
  EXPECT_NE(fast[0].text.find("37.50 GB/s (3 senders asking 300 Gb/s in all)"), std::string::npos) << fast[0].text;
  EXPECT_TRUE(warnings_of(incast + "    rate: 40Gbps\n", four, every_agent(four, measured_agent())).empty());
}

TEST(CheckLoads, ADpdkReceiverIsHeldToItsQueuesCoresTogether) {
  const std::string line_rate =
      "  - name: frames\n    engine: dpdk\n    topology: pairs\n    duration: 5s\n    frame_size: 1500B\n";
  // A 100G port is 12.5 GB/s: 1.25 of one 10 GB/s core, 0.31 of four queues' cores.
  const auto one_queue = warnings_of(line_rate, {"a", "b"}, every_agent({"a", "b"}, measured_agent(1)));
  ASSERT_EQ(agents_warned(one_queue), "a,b");
  EXPECT_NE(one_queue[0].text.find("it may receive 12.50 GB/s (0000:17:00.0 at 100 Gb/s)"), std::string::npos)
      << one_queue[0].text;
  EXPECT_NE(one_queue[0].text.find("about 125 % of the 1 core of its receiving queue,"), std::string::npos)
      << one_queue[0].text;
  EXPECT_TRUE(warnings_of(line_rate, {"a", "b"}, every_agent({"a", "b"}, measured_agent(4))).empty());
  // Paced at 50 Gb/s: 6.25 GB/s, 0.63 of one core: still said, with the senders' rate as whence.
  const auto paced =
      warnings_of(line_rate + "    rate: 50Gbps\n", {"a", "b"}, every_agent({"a", "b"}, measured_agent(1)));
  ASSERT_EQ(paced.size(), 2u);
  EXPECT_NE(paced[0].text.find("6.25 GB/s (1 sender asking 50 Gb/s in all)"), std::string::npos) << paced[0].text;
}

// An inventory is a peer's word: rates that are no rates are not read, and only the first
// kMaxCheckRates message sizes are.
TEST(CheckLoads, AnInventorysRatesThatAreNoRatesAreNotReadAndOnlyTheFirstFewAre) {
  const std::string unpaced =
      "  - name: checked\n    engine: rdma\n    topology: pairs\n    duration: 5s\n    message_size: 4KiB\n";
  proto::Inventory hostile = measured_agent();
  auto* rates = hostile.mutable_check_rates();
  rates->clear_rdma();
  for (const double rate : {std::nan(""), -1.0, std::numeric_limits<double>::infinity(), 0.0}) {
    auto* entry = rates->add_rdma();
    entry->set_message_size(4096);
    entry->set_bytes_per_s(rate);
  }
  for (int i = 0; i < 4; ++i) rates->add_rdma()->set_bytes_per_s(1e3);  // no message size
  auto* late = rates->add_rdma();                                       // the ninth: not read
  late->set_message_size(4096);
  late->set_bytes_per_s(1e6);
  rates->set_dpdk_frame_bytes_per_s(std::nan(""));
  EXPECT_TRUE(warnings_of(unpaced, {"a", "b"}, every_agent({"a", "b"}, hostile)).empty());
  EXPECT_TRUE(warnings_of("  - name: frames\n    engine: dpdk\n    topology: pairs\n    duration: 5s\n", {"a", "b"},
                          every_agent({"a", "b"}, hostile))
                  .empty());
}

std::string written(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("tusk-check-loads-" + name);
  std::ofstream(path) << text;
  return path.string();
}

TEST(CheckLoads, TheInventoryFileReadsBackWhatInventoryWroteAndABadOneIsNamedByItsField) {
  nlohmann::json file{
      {"agents", nlohmann::json::array({{{"name", "a"}, {"inventory", inventory_file_json(measured_agent(2))}}})}};
  const auto read = read_inventory_file(written("good.json", file.dump()));
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read.at("a").SerializeAsString(), measured_agent(2).SerializeAsString());

  const auto error_of = [](const std::string& name, const std::string& text) {
    const std::string path = written(name, text);
    try {
      read_inventory_file(path);
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;
      return what.substr(path.size() + 2);
    }
    return std::string("read");
  };
  EXPECT_EQ(error_of("missing.json", "{}").rfind("agents: missing or not a list", 0), 0u);
  EXPECT_EQ(error_of("text.json", "not json").rfind("not JSON", 0), 0u);
  EXPECT_EQ(error_of("noname.json", R"({"agents": [{"inventory": {}}]})"), "agents[0].name: missing or not a text");
  EXPECT_EQ(error_of("old.json", R"({"agents": [{"name": "a"}]})").rfind("agents[0].inventory: missing (agent 'a'", 0),
            0u);
  EXPECT_EQ(
      error_of(
          "typed.json",
          R"({"agents": [{"name": "a", "inventory": {}}, {"name": "b", "inventory": {"check_rates": {"dpdk_frame_bytes_per_s": "fast"}}}]})")
          .rfind("agents[1].inventory: ", 0),
      0u);
  EXPECT_EQ(error_of("twice.json", R"({"agents": [{"name": "a", "inventory": {}}, {"name": "a", "inventory": {}}]})"),
            "agents[1].name: 'a' is there twice");
  // A newer agent's fields are passed over.
  EXPECT_EQ(
      read_inventory_file(written("newer.json", R"({"agents": [{"name": "a", "inventory": {"future": 1}}]})")).size(),
      1u);
}

}  // namespace
}  // namespace tusk
