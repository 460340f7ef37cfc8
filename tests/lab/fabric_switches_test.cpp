// The switches as evidence on the fabric lab, whose switches serve IF-MIB and LLDP-MIB as real
// ones do (snmpd in every switch namespace, lldpd its AgentX subagent, on a management network):
// the controller checks the cabling against the topology file before any traffic, reads every
// switch port's counters before and after each test, and confirms (or splits) a suspect link with
// what the switches at its ends counted, also when the switches police the probes' ICMP answers.
// A switch that does not answer is a warning. Needs root, skips otherwise.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include "common/clock.hpp"
#include "tests/support/fabric_run.hpp"
#include "tests/support/headless_chromium.hpp"
#include "tests/support/report_page_check.hpp"

namespace tusk::testing {
namespace {

using nlohmann::json;

std::string mesh_profile(const std::string& cabling = "check") {
  return R"(name: switches
agents:
  hosts: [l1h1, l1h2, l2h1, l2h2]
  wait: 30s
cabling: )" +
         cabling +
         R"(
tests:
  - name: mesh
    engine: dpdk
    duration: 8s
    topology: mesh
    rate: 2kpps
    frame_size: 256B
    encapsulation: ipv4_udp
    ecmp_paths: 2
    coverage: 99%
    trace_rate: 1500
    thresholds:
      max_lost_frames: 0
)";
}

class FabricSwitches : public FabricRun {
 protected:
  std::string log() const { return read_file(dir_ + "/controller.log"); }
  std::string credentials() {
    const std::string path = dir_ + "/snmp.yaml";
    std::ofstream(path) << lab_->run("snmp-credentials");
    return path;
  }
  // The lab's topology file with `edit` applied to its text.
  std::string topology_with(const std::function<std::string(std::string)>& edit, const std::string& snmp = "v2c") {
    const std::string path = dir_ + "/topology-edited.yaml";
    std::ofstream(path) << edit(lab_->run("topology-file --snmp " + snmp));
    return path;
  }
  // `settle`: 4 s where a test reads the counters after its traffic (the lab's snmpd caches them
  // for 3 s), none where it does not.
  std::vector<std::string> switch_options(const std::string& topology, const std::string& settle = "4s") {
    return {"--topology", topology, "--snmp-credentials", credentials(), "--snmp-settle", settle};
  }
  // Until the hosts' lldpd has heard its leaf on every host port (each leaf sends every second),
  // so the agents, which ask it as they start, have it to report. `leaf_of`: a host's leaf where
  // its cable is not where the lab made it.
  void wait_for_host_lldp(const std::map<std::string, std::string>& leaf_of = {}) {
    std::string socket = lab_->run("host-lldp-socket");
    socket.erase(socket.find_last_not_of(" \n") + 1);
    for (int i = 0; i < 100; ++i) {
      std::unique_ptr<FILE, decltype(&pclose)> pipe(
          popen(("lldpcli -u " + socket + " -f keyvalue show neighbors 2>/dev/null").c_str(), "r"), &pclose);
      std::string text;
      std::array<char, 4096> buffer{};
      while (const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe.get()))
        text.append(buffer.data(), n);
      bool all = true;
      for (const auto& host : hosts_) {
        const auto moved = leaf_of.find(host.name);
        const std::string leaf = moved != leaf_of.end() ? moved->second : "l" + std::to_string(host.leaf);
        // Only that leaf: after a swap the old neighbour stays until its TTL runs out.
        const std::string key = lab_->ns(host.name) + ".chassis.name=";
        const auto first = text.find(key);
        all = all && text.find(key + leaf + "\n") == first && first != std::string::npos &&
              text.find(key, first + 1) == std::string::npos;
      }
      if (all) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "the hosts' lldpd did not hear each host port's leaf in 10 s";
  }
  // report.html draws without an error and shows `text`.
  void expect_page_shows(const std::string& text) { expect_report_page_shows(dir_ + "/report", dir_, text); }
  // With l1h1's and l2h1's cables swapped, a run under `cabling: enforce` names both before any
  // traffic, from what each agent heard (`words` as the finding says it, `source` as
  // report.json's lldp_neighbour does).
  void expect_swapped_cables_stop_the_run(const std::string& words, const std::string& source) {
    const std::string profile = R"(name: swapped
agents:
  hosts: [l1h1, l2h1]
  wait: 30s
cabling: enforce
tests:
  - name: pairs
    engine: dpdk
    duration: 3s
    topology: pairs
    rate: 1kpps
    encapsulation: ipv4_udp
)";
    ASSERT_EQ(run(profile, {"--topology", topology_file()}), 1) << log();
    const json result = report();
    EXPECT_TRUE(result["tests"].empty()) << "traffic ran";
    const json& cabling = result["cabling"];
    ASSERT_TRUE(cabling.is_object()) << log();
    std::set<std::string> findings;
    for (const auto& finding : cabling["findings"]) findings.insert(finding["text"].get<std::string>());
    for (const auto& [host, leaf, other] : {std::tuple{"l1h1", "l1", "l2"}, std::tuple{"l2h1", "l2", "l1"}}) {
      const std::string expected =
          fmt::format("{}:port should be cabled to {}:h1 but LLDP finds {}:h1 ({} at agent {}, port {})", host, leaf,
                      other, words, host, lab_->ns(host));
      EXPECT_TRUE(findings.contains(expected)) << expected << "\n" << cabling.dump(1);
    }
    EXPECT_EQ(findings.size(), 2u) << cabling.dump(1);
    for (const auto& agent : result["agents"]) {
      ASSERT_EQ(agent["dpdk_ports"].size(), 1u);
      EXPECT_EQ(agent["dpdk_ports"][0]["lldp_neighbour"]["source"], source) << agent.dump(1);
    }
  }
  static const json* direction(const json& counters, const std::string& key) {
    for (const auto& link : counters["links"]) {
      for (const char* way : {"a_to_b", "b_to_a"}) {
        if (link[way]["link"] == key) return &link[way];
      }
    }
    return nullptr;
  }
};

TEST_F(FabricSwitches, CablingIsCheckedBeforeTrafficAndACableTheFileHasWrongStopsTheRunUnderEnforce) {
  make_lab(2);
  wait_for_host_lldp();
  start_agents();
  // As cabled: every switch port's LLDP neighbour is the one the file has, v3 with privacy.
  const auto as_cabled = [](std::string text) { return text; };
  ASSERT_EQ(run(mesh_profile(), switch_options(topology_with(as_cabled, "v3"), "0s")), 0) << log();
  json cabling = report()["cabling"];
  ASSERT_TRUE(cabling.is_object()) << log();
  EXPECT_TRUE(cabling["clean"].get<bool>()) << cabling.dump(1);
  // 8 switch-to-switch ends, 4 leaf ports to hosts (the hosts send no LLDP, so the leaves hear
  // none), 4 host ports, whose hosts heard their leaf
  EXPECT_EQ(cabling["ends_checked"], 16);
  EXPECT_EQ(cabling["ends_matched"], 12);
  EXPECT_TRUE(cabling["unverified"].empty()) << cabling["unverified"].dump();
  std::set<std::string> seen;
  for (const auto& cable : cabling["cables_seen"]) {
    EXPECT_TRUE(cable["in_topology_file"].get<bool>()) << cable.dump();
    seen.insert(cable["ends"][0].get<std::string>() + " <-> " + cable["ends"][1].get<std::string>());
  }
  // Every cable with both its ends: the switch links from the switches, the host cables from the hosts.
  EXPECT_EQ(seen, (std::set<std::string>{"l1:s1 <-> s1:l1", "l1:s2 <-> s2:l1", "l2:s1 <-> s1:l2", "l2:s2 <-> s2:l2",
                                         "l1:h1 <-> l1h1:port", "l1:h2 <-> l1h2:port", "l2:h1 <-> l2h1:port",
                                         "l2:h2 <-> l2h2:port"}));
  EXPECT_NE(log().find("cabling: 12 of 16 ports checked by LLDP are where the topology file says"), std::string::npos)
      << log();

  // The topology their LLDP shows, from a seed of the file: the four switch-to-switch cables.
  {
    Process discover({tusk::build_paths::controller_bin(), "topology", "discover", topology_with(as_cabled),
                      "--snmp-credentials", credentials(), "--out", dir_ + "/discovered.yaml"},
                     dir_ + "/discover.log");
    ASSERT_EQ(discover.wait(std::chrono::seconds(60)).value_or(-1), 0) << read_file(dir_ + "/discover.log");
    const YAML::Node discovered = YAML::LoadFile(dir_ + "/discovered.yaml");
    std::set<std::string> links;
    for (const auto& link : discovered["links"]) links.insert(link["ends"].as<std::string>());
    EXPECT_EQ(links,
              (std::set<std::string>{"l1:s1 <-> s1:l1", "l1:s2 <-> s2:l1", "l2:s1 <-> s1:l2", "l2:s2 <-> s2:l2"}))
        << read_file(dir_ + "/discovered.yaml");
  }
  // With the run's report, the host cables the hosts heard, each host port where the file places
  // its address; from the report alone, those cables with the hosts named by their agents.
  {
    Process discover(
        {tusk::build_paths::controller_bin(), "topology", "discover", topology_with(as_cabled), "--snmp-credentials",
         credentials(), "--report", dir_ + "/report/report.json", "--out", dir_ + "/discovered-all.yaml"},
        dir_ + "/discover-all.log");
    ASSERT_EQ(discover.wait(std::chrono::seconds(60)).value_or(-1), 0) << read_file(dir_ + "/discover-all.log");
    std::set<std::string> links;
    for (const auto& link : YAML::LoadFile(dir_ + "/discovered-all.yaml")["links"]) {
      links.insert(link["ends"].as<std::string>());
    }
    EXPECT_EQ(links, seen) << read_file(dir_ + "/discovered-all.yaml");
    Process hosts_only({tusk::build_paths::controller_bin(), "topology", "discover", "--report",
                        dir_ + "/report/report.json", "--out", dir_ + "/discovered-hosts.yaml"},
                       dir_ + "/discover-hosts.log");
    ASSERT_EQ(hosts_only.wait(std::chrono::seconds(60)).value_or(-1), 0) << read_file(dir_ + "/discover-hosts.log");
    const YAML::Node found = YAML::LoadFile(dir_ + "/discovered-hosts.yaml");
    std::set<std::string> host_links;
    for (const auto& link : found["links"]) host_links.insert(link["ends"].as<std::string>());
    EXPECT_EQ(host_links.size(), hosts_.size()) << read_file(dir_ + "/discovered-hosts.yaml");
    for (const auto& host : hosts_) {
      // Each host by its agent's name, its port at its own address, cabled to its leaf's port hN.
      const YAML::Node interfaces = found["devices"][host.name]["interfaces"];
      ASSERT_TRUE(interfaces.IsMap() && interfaces.size() == 1) << host.name << "\n"
                                                                << read_file(dir_ + "/discovered-hosts.yaml");
      const std::string port = interfaces.begin()->first.as<std::string>();
      EXPECT_EQ(interfaces.begin()->second.as<std::string>(), host.address);
      const std::string leaf_end = "l" + std::to_string(host.leaf) + ":h" + host.name.substr(host.name.size() - 1);
      const std::string host_end = host.name + ":" + port;
      EXPECT_TRUE(host_links.contains(leaf_end + " <-> " + host_end) ||
                  host_links.contains(host_end + " <-> " + leaf_end))
          << leaf_end << " " << host_end << "\n"
          << read_file(dir_ + "/discovered-hosts.yaml");
    }
  }

  // From a seed of the managed switches with s2 left out, as a switch nobody can read: every port
  // address of the three read is their IP-MIB's, and each of s2's addresses the flows' traced hops
  // met is placed at the port the probe came in on, as the lab's file has it.
  {
    const YAML::Node lab = YAML::LoadFile(topology_with(as_cabled));
    YAML::Node seed;
    for (const char* name : {"l1", "l2", "s1"})
      seed["devices"][name]["management"] = lab["devices"][name]["management"];
    std::ofstream(dir_ + "/seed.yaml") << seed;
    Process discover(
        {tusk::build_paths::controller_bin(), "topology", "discover", dir_ + "/seed.yaml", "--snmp-credentials",
         credentials(), "--report", dir_ + "/report/report.json", "--out", dir_ + "/discovered-traced.yaml"},
        dir_ + "/discover-traced.log");
    ASSERT_EQ(discover.wait(std::chrono::seconds(60)).value_or(-1), 0) << read_file(dir_ + "/discover-traced.log");
    const auto places = [](const YAML::Node& file) {
      std::map<std::string, std::string> out;  // address -> device:interface
      for (const auto& device : file["devices"]) {
        for (const auto& port : device.second["interfaces"]) {
          const std::string where = device.first.as<std::string>() + ":" + port.first.as<std::string>();
          if (port.second.IsScalar()) out[port.second.as<std::string>()] = where;
          if (port.second.IsSequence()) {
            for (const auto& address : port.second) out[address.as<std::string>()] = where;
          }
        }
      }
      return out;
    };
    const auto expected = places(lab);
    const auto found = places(YAML::LoadFile(dir_ + "/discovered-traced.yaml"));
    const std::string shown = read_file(dir_ + "/discovered-traced.yaml") + read_file(dir_ + "/discover-traced.log");
    for (const auto& [address, where] : expected) {
      const std::string device = where.substr(0, where.find(':'));
      if (device != "l1" && device != "l2" && device != "s1") continue;
      EXPECT_TRUE(found.contains(address) && found.at(address) == where) << address << " on " << where << "\n" << shown;
    }
    std::set<std::string> s2_hops;
    const json run_report = report();
    for (const auto& test : run_report.at("tests")) {
      if (!test.contains("localisation") || !test["localisation"].is_object()) continue;
      for (const auto& flow : test["localisation"]["flows"]) {
        for (const auto& hop : flow["path"]) {
          const auto place = expected.find(hop["address"].get<std::string>());
          if (place != expected.end() && place->second.starts_with("s2:")) s2_hops.insert(place->first);
        }
      }
    }
    ASSERT_FALSE(s2_hops.empty()) << "no flow crossed s2";
    for (const auto& address : s2_hops) {
      ASSERT_TRUE(found.contains(address)) << address << "\n" << shown;
      EXPECT_EQ(found.at(address), expected.at(address)) << shown;
    }
  }

  // The file has leaf 1's uplinks the other way round: named at both ends, and no traffic.
  const auto crossed = [](std::string text) {
    text = std::regex_replace(text, std::regex("ends: l1:s1 <-> s1:l1"), "ends: l1:s1 <-> XX");
    text = std::regex_replace(text, std::regex("ends: l1:s2 <-> s2:l1"), "ends: l1:s2 <-> s1:l1");
    return std::regex_replace(text, std::regex("ends: l1:s1 <-> XX"), "ends: l1:s1 <-> s2:l1");
  };
  ASSERT_EQ(run(mesh_profile("enforce"), switch_options(topology_with(crossed), "0s")), 1) << log();
  const json enforced = report();
  EXPECT_TRUE(enforced["tests"].empty()) << "traffic ran";
  cabling = enforced["cabling"];
  EXPECT_FALSE(cabling["clean"].get<bool>());
  std::set<std::string> findings;
  for (const auto& finding : cabling["findings"]) findings.insert(finding["text"].get<std::string>());
  EXPECT_TRUE(findings.contains("l1:s1 should be cabled to s2:l1 but LLDP finds s1:l1 (LLDP-MIB of l1)"))
      << cabling.dump(1);
  EXPECT_TRUE(findings.contains("s2:l1 should be cabled to l1:s1 but LLDP finds l1:s2 (LLDP-MIB of s2)"))
      << cabling.dump(1);
  EXPECT_NE(enforced["conclusion"].get<std::string>().find("cabling: enforce"), std::string::npos)
      << enforced["conclusion"];
  expect_page_shows("l1:s1 should be cabled to s2:l1 but LLDP finds s1:l1 (LLDP-MIB of l1)");
}

// Two hosts' cables swapped: each agent's host heard the other leaf's port on its own (the hosts'
// lldpd, receive-only), so both are named before any traffic, and enforce stops the run there.
TEST_F(FabricSwitches, SwappedHostCablesAreNamedBeforeTrafficAndEnforceStopsTheRun) {
  make_lab(1);
  lab_->run("swap l1h1 l2h1");
  wait_for_host_lldp({{"l1h1", "l2"}, {"l2h1", "l1"}});
  start_agents();
  expect_swapped_cables_stop_the_run("LLDP", "lldpd");
}

// The same swap on hosts whose ports no lldpd sees (a DPDK port bound to its PCI driver has no
// kernel interface): each agent reads the LLDP frames its port receives while idle, and the check
// names both cables from them.
TEST_F(FabricSwitches, SwappedHostCablesAreNamedFromTheDpdkPortsOwnLldpFramesWithoutLldpd) {
  make_lab(1);
  lab_->run("swap l1h1 l2h1");
  start_agents({}, {}, /*host_lldpd=*/false);
  for (const char* host : {"l1h1", "l2h1"}) {
    const std::string agent_log = dir_ + "/agent-" + host + ".log";
    // The switches' lldpd sends every second.
    ASSERT_TRUE(wait_for_text(agent_log, "(its own frames", 15s)) << read_file(agent_log);
  }
  expect_swapped_cables_stop_the_run("LLDP frames", "frames");
}

// 2 % loss on leaf 1's uplink to spine 2, with every switch policing its ICMP errors (time exceeded
// answers to the path probes) to one every 200 ms per destination: the spine's port counts the
// discards, the link's counter deltas are in the report at both ends, and the suspect is that
// link, confirmed by them.
TEST_F(FabricSwitches, LossOnALinkShowsInBothEndsCountersAndConfirmsTheSuspectWhenProbesArePoliced) {
  make_lab(2);
  start_agents();
  lab_->run("icmp-limit 200");
  lab_->run("impair l1-s2 up loss=2");
  ASSERT_EQ(run(mesh_profile(), switch_options(topology_with([](std::string t) { return t; }))), 1) << log();
  const json test = report()["tests"][0];
  const json& counters = test["switch_counters"];
  ASSERT_TRUE(counters.is_object()) << log();
  EXPECT_TRUE(counters["unreadable"].empty()) << counters["unreadable"].dump();
  const json* lossy = direction(counters, "l1:s2 -> s2:l1");
  ASSERT_NE(lossy, nullptr) << counters.dump(1).substr(0, 3000);
  EXPECT_TRUE((*lossy)["sender_read"].get<bool>());
  EXPECT_TRUE((*lossy)["receiver_read"].get<bool>());
  EXPECT_GT((*lossy)["sent"].get<std::uint64_t>(), 1000u);
  EXPECT_GE((*lossy)["in_discards"].get<std::uint64_t>(), 10u);
  EXPECT_TRUE((*lossy)["counts_loss"].get<bool>());
  for (const auto& link : counters["links"]) {
    for (const char* way : {"a_to_b", "b_to_a"}) {
      if (link[way]["link"] == "l1:s2 -> s2:l1") continue;
      // Every other direction exactly clean: s2:l1 -> l1:s2 too, whose receiver l1:s2 is the
      // impaired sender (its egress program at the tcx hook, tests/lab/tcx_egress.cpp).
      EXPECT_EQ(link[way].value("lost", std::uint64_t{0}), 0u) << link[way].dump();
      EXPECT_FALSE(link[way]["counts_loss"].get<bool>()) << link[way].dump();
    }
  }
  const json& found = test["localisation"];
  ASSERT_TRUE(found.is_object());
  ASSERT_FALSE(found["suspects"].empty()) << found["conclusion"];
  const json& top = found["suspects"][0];
  EXPECT_EQ(top["link"], "l1:s2 -> s2:l1") << found["conclusion"];
  EXPECT_NE(top["confidence"], "low") << found["conclusion"];
  EXPECT_TRUE(top["switch_counters"]["confirmed"].get<bool>()) << top.dump(1);
  EXPECT_NE(found["conclusion"].get<std::string>().find("confirmed by the switch counters"), std::string::npos)
      << found["conclusion"];
  EXPECT_NE(log().find("switch counters: 8 cables read, loss counted on l1:s2 -> s2:l1"), std::string::npos) << log();
  // The link's row joins the flows' fit, the probes and both ends' counts, and says what to do first.
  ASSERT_FALSE(test["link_evidence"].empty()) << test.dump(1).substr(0, 3000);
  const json& row = test["link_evidence"][0];
  EXPECT_NE(row["link"].get<std::string>().find("l1:s2 <-> s2:l1"), std::string::npos) << row.dump(1);
  EXPECT_TRUE(row["failing"].get<bool>());
  EXPECT_NE(row["flows"].get<std::string>().find("loss "), std::string::npos) << row.dump(1);
  EXPECT_NE(row["switch_counters"].get<std::string>().find("l1:s2 -> s2:l1: 0 in errors,"), std::string::npos)
      << row.dump(1);
  EXPECT_NE(row["next_step"].get<std::string>().find("s2:l1 discarded"), std::string::npos) << row.dump(1);
  expect_page_shows("Switch counters");
  expect_page_shows("Evidence per link");
}

// A 16 s test whose switches are read every 3 s, and 2 % loss that begins on leaf 1's uplink to
// spine 2 part-way through: the intervals before it count none there, and the first that does
// ends after the loss began.
TEST_F(FabricSwitches, LossThatBeginsMidTestIsCountedFromTheIntervalItBeganIn) {
  make_lab(2);
  start_agents();
  std::string profile = mesh_profile();
  profile.replace(profile.find("duration: 8s"), 12, "duration: 16s");
  std::string impaired_at;
  std::thread impair([&] {
    std::this_thread::sleep_for(std::chrono::seconds(10));
    impaired_at = utc_iso_time(realtime_ns());
    lab_->run("impair l1-s2 up loss=2");
  });
  std::vector<std::string> options = switch_options(topology_with([](std::string t) { return t; }));
  options.insert(options.end(), {"--snmp-interval", "3s"});
  const int exit_code = run(profile, options);
  impair.join();
  ASSERT_EQ(exit_code, 1) << log();
  const json test = report()["tests"][0];
  const json& intervals = test["switch_intervals"];
  ASSERT_TRUE(intervals.is_object()) << log();
  EXPECT_GE(intervals["intervals"].get<int>(), 5) << intervals.dump(1);
  const json* first_lossy = nullptr;
  for (const auto& noted : intervals["noted"]) {
    for (const auto& lossy : noted["lossy"]) {
      EXPECT_EQ(lossy["link"], "l1:s2 -> s2:l1") << noted.dump(1);
      if (!first_lossy) first_lossy = &noted;
    }
  }
  ASSERT_NE(first_lossy, nullptr) << intervals.dump(1);
  EXPECT_GT((*first_lossy)["to"].get<std::string>(), impaired_at) << "loss counted before it began";
  EXPECT_LT(intervals["noted"].size(), intervals["intervals"].get<std::size_t>()) << "the first intervals were clean";
  EXPECT_NE(log().find("switch counters per interval: "), std::string::npos) << log();
  EXPECT_NE(log().find(", loss counted in "), std::string::npos) << log();
}

// A switch whose management address answers nothing: the run goes on, and says so. Each of its
// three readings (cabling, before, after) waits out --snmp-timeout x (1 + --snmp-retries): 0.3 s
// here, 6 s by default.
TEST_F(FabricSwitches, AnUnreachableSwitchIsAWarningNotAFailure) {
  make_lab(1);
  start_agents();
  const auto dead_spine = [](std::string text) {
    // s2's management address moves to one no namespace has.
    const std::regex s2(R"((  s2:\n    management:\n      address: )([0-9.]+)\.([0-9]+))");
    return std::regex_replace(text, s2, "$1$2.250");
  };
  const std::string profile = R"(name: unreachable
agents:
  hosts: [l1h1, l2h1]
  wait: 30s
tests:
  - name: pairs
    engine: dpdk
    duration: 3s
    topology: pairs
    rate: 1kpps
    encapsulation: ipv4_udp
)";
  std::vector<std::string> options = switch_options(topology_with(dead_spine), "0s");
  options.insert(options.end(), {"--snmp-timeout", "100ms", "--snmp-retries", "2"});
  ASSERT_EQ(run(profile, options), 0) << log();
  const json report_json = report();
  EXPECT_EQ(report_json["cabling"]["unreadable"].size(), 1u) << report_json["cabling"].dump(1);
  const json& counters = report_json["tests"][0]["switch_counters"];
  ASSERT_EQ(counters["unreadable"].size(), 1u) << counters.dump(1).substr(0, 2000);
  EXPECT_NE(counters["unreadable"][0].get<std::string>().find("switch s2"), std::string::npos);
  bool warned = false;
  for (const auto& warning : report_json["tests"][0]["warnings"]) {
    warned = warned || warning.get<std::string>().find("switch s2") != std::string::npos;
  }
  EXPECT_TRUE(warned) << report_json["tests"][0]["warnings"].dump(1);
  EXPECT_NE(log().find("could not be read"), std::string::npos) << log();
}

}  // namespace
}  // namespace tusk::testing
