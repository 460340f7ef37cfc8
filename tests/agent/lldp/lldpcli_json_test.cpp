// lldpcli's neighbour lists in both JSON formats. tests/agent/lldp/data/ holds what lldpcli 1.0.16
// (Debian 12) printed in a lab of three network namespaces joined by veths, each running lldpd
// with its own control socket (-u): one, two and no neighbours; a neighbour without a system name
// that sent locally assigned ids, one whose name holds control bytes and ill-formed UTF-8 (which
// the json format writes raw), one named "id", one with a 255-byte name. Then output that is
// not lldpcli's: each is refused with the field path that is wrong. lldpcli-fabric-lab.* is the
// same lldpcli on a leaf of the fabric lab.
#include "agent/lldp/lldpcli_json.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/support/build_paths.hpp"

namespace tusk::lldp {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::string capture(const std::string& name) {
  std::ifstream in(build_paths::source_dir() + "/tests/agent/lldp/data/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Both formats of one capture, which must read alike.
std::vector<InterfaceNeighbour> both_formats(const std::string& name) {
  const auto json = parse_lldpcli_neighbours(capture("lldpcli-" + name + ".json"));
  const auto json0 = parse_lldpcli_neighbours(capture("lldpcli-" + name + ".json0"));
  EXPECT_EQ(json, json0) << name;
  return json;
}

LldpNeighbour spine_b() {
  LldpNeighbour n;
  n.chassis_id = "1e:e4:19:ea:18:1c";
  n.chassis_id_subtype = 4;
  n.port_id = "lldpb0";
  n.port_id_subtype = 5;
  n.port_description = "Uplink to leaf-a";
  n.system_name = "spine-b";
  n.management_address = "10.77.0.2";  // of 10.77.0.2 and fe80::1ce4:19ff:feea:181c
  n.ttl_s = 120;
  return n;
}

LldpNeighbour spine_c() {
  LldpNeighbour n;
  n.chassis_id = "f6:15:58:ee:a9:64";
  n.chassis_id_subtype = 4;
  n.port_id = "f6:15:58:ee:a9:64";
  n.port_id_subtype = 3;
  n.port_description = "lldpc0";
  n.system_name = "spine-c";
  n.management_address = "10.77.1.2";
  n.ttl_s = 120;
  return n;
}

// Sent by hand (no System Name TLV): lldpcli's json has "id" right under "chassis".
LldpNeighbour nameless() {
  LldpNeighbour n;
  n.chassis_id = "chassis-c-local";
  n.chassis_id_subtype = 7;
  n.port_id = "port-17";
  n.port_id_subtype = 7;
  n.port_description = "desc with \"quotes\" \\\\ and tab\\t";
  n.ttl_s = 90;
  return n;
}

LldpNeighbour sent_by_hand(const std::string& mac, const std::string& name) {
  LldpNeighbour n;
  n.chassis_id = mac;
  n.chassis_id_subtype = 4;
  n.port_id = "Ethernet1/2";
  n.port_id_subtype = 5;
  n.system_name = name;
  n.management_address = "192.0.2.9";
  n.ttl_s = 3600;
  return n;
}

// `n` as lldpcli reports it `seconds` after lldpd first heard it (its "age").
LldpNeighbour aged(LldpNeighbour n, std::uint32_t seconds) {
  n.age_s = seconds;
  return n;
}

TEST(LldpcliJson, ReadsOneNeighbourWhereInterfaceIsAnObject) {
  const std::vector<InterfaceNeighbour> expected{{"lldpa0", aged(spine_b(), 6)}};
  EXPECT_EQ(both_formats("one"), expected);
}

TEST(LldpcliJson, ReadsSeveralNeighboursWhereInterfaceIsAnArray) {
  const std::vector<InterfaceNeighbour> expected{{"lldpa0", aged(spine_b(), 6)}, {"lldpa1", aged(spine_c(), 6)}};
  EXPECT_EQ(both_formats("two"), expected);
}

// lldpcli-fabric-lab.*: a leaf of the fabric lab (tests/lab/fabric-lab.sh) and its two spines.
TEST(LldpcliJson, ReadsTheFabricLabsLeaf) {
  const auto spine = [](const std::string& name, const std::string& mac, const std::string& address) {
    LldpNeighbour n;
    n.chassis_id = mac;
    n.chassis_id_subtype = 4;
    n.port_id = "l1";
    n.port_id_subtype = 5;
    n.port_description = "l1";
    n.system_name = name;
    n.management_address = address;
    n.ttl_s = 4;
    n.age_s = 5;
    return n;
  };
  const std::vector<InterfaceNeighbour> expected{{"s1", spine("s1", "02:74:6c:01:01:01", "198.18.142.11")},
                                                 {"s2", spine("s2", "02:74:6c:01:02:01", "198.18.142.12")}};
  EXPECT_EQ(both_formats("fabric-lab"), expected);
}

TEST(LldpcliJson, ReadsNoNeighbours) {
  EXPECT_TRUE(both_formats("none").empty());
  EXPECT_TRUE(parse_lldpcli_neighbours(R"({"lldp": [{"interface": []}]})").empty());
}

// json writes a name's control bytes raw (invalid JSON) and its ill-formed UTF-8 raw; json0 escapes
// the first and writes U+FFFD for the second. Both read as the same escaped, valid text.
TEST(LldpcliJson, ReadsRawControlBytesAndNamelessChassisAndTwoNeighboursOnOnePort) {
  const std::vector<InterfaceNeighbour> expected{
      {"lldpa0", aged(spine_b(), 41)},
      {"lldpa1", aged(nameless(), 23)},
      {"lldpa1", aged(sent_by_hand("02:aa:bb:cc:dd:02", "sw\\x01itch\xEF\xBF\xBD\xC3\xA9\\x1b[31m"), 12)}};
  EXPECT_EQ(both_formats("hostile"), expected);
}

TEST(LldpcliJson, ReadsASystemNamedIdAndALongName) {
  const std::vector<InterfaceNeighbour> expected{
      {"lldpa1", aged(nameless(), 29)},
      {"lldpa1", aged(sent_by_hand("02:aa:bb:cc:dd:02", std::string(255, 'x')), 6)},
      {"lldpa1", aged(sent_by_hand("02:aa:bb:cc:dd:03", "id"), 1)}};
  EXPECT_EQ(both_formats("edge"), expected);
}

TEST(LldpcliJson, MapsLldpcliIdTypesToSubtypes) {
  const auto read = [](const char* chassis_type, const char* port_type) {
    const std::string text = std::string(R"({"lldp": {"interface": {"eth0": {"chassis": {"sw": {"id": {"type": ")") +
                             chassis_type + R"(", "value": "v"}}}, "port": {"id": {"type": ")" + port_type +
                             R"(", "value": "v"}, "ttl": "1"}}}}})";
    const auto neighbours = parse_lldpcli_neighbours(text);
    EXPECT_EQ(neighbours.size(), 1u);
    return std::pair<int, int>(neighbours.at(0).second.chassis_id_subtype, neighbours.at(0).second.port_id_subtype);
  };
  EXPECT_EQ(read("ifalias", "ifalias"), std::pair(2, 1));
  EXPECT_EQ(read("mac", "mac"), std::pair(4, 3));
  EXPECT_EQ(read("ip", "ip"), std::pair(5, 4));
  EXPECT_EQ(read("ifname", "ifname"), std::pair(6, 5));
  EXPECT_EQ(read("local", "local"), std::pair(7, 7));
  EXPECT_EQ(read("unhandled", "unhandled"), std::pair(0, 0));
}

TEST(LldpcliJson, TakesTheFirstIpv4ManagementAddressAndAChassisTtl) {
  const auto neighbours = parse_lldpcli_neighbours(
      R"({"lldp": {"interface": {"eth0": {"chassis": {"sw": {"id": {"type": "mac", "value": "02:00:00:00:00:01"},
          "mgmt-ip": ["2001:db8::1", "192.0.2.1", "192.0.2.2"], "ttl": "60"}},
          "port": {"id": {"type": "ifname", "value": "swp1"}}}}}})");
  ASSERT_EQ(neighbours.size(), 1u);
  EXPECT_EQ(neighbours[0].second.management_address, "192.0.2.1");
  EXPECT_EQ(neighbours[0].second.ttl_s, 60u);
  const auto v6 = parse_lldpcli_neighbours(
      R"({"lldp": [{"interface": [{"name": "eth0", "chassis": [{"mgmt-ip": [{"value": "2001:db8::1"}]}],
          "port": [{"id": [{"type": "ifname", "value": "swp1"}]}]}]}]})");
  ASSERT_EQ(v6.size(), 1u);
  EXPECT_EQ(v6[0].second.management_address, "2001:db8::1");
  EXPECT_EQ(v6[0].second.ttl_s, 0u);
}

void expect_refused(const std::string& text, const std::string& message) {
  try {
    parse_lldpcli_neighbours(text);
    ADD_FAILURE() << "read " << text.substr(0, 200);
  } catch (const LldpcliOutputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(message)) << text.substr(0, 200);
  }
}

TEST(LldpcliJson, RefusesOutputThatIsNotLldpcliNamingTheField) {
  expect_refused("lldpcli: unable to connect", "lldpcli output is not JSON: [json.exception.parse_error.101]");
  expect_refused("", "not JSON");
  expect_refused(R"({"lldp": {"interface": {"eth0": {}}})", "not JSON");
  expect_refused("{}", "lldp: missing");
  expect_refused("[]", "lldp: missing");
  expect_refused(R"({"lldp": 7})", "lldp: a number, not an object");
  expect_refused(R"({"lldp": {"interface": "eth0"}})", "lldp.interface: a string, neither an object nor an array");
  expect_refused(R"({"lldp": {"interface": [7]}})", "lldp.interface[0]: a number, not an object");
  expect_refused(R"({"lldp": {"interface": {"eth0": []}}})", "lldp.interface.eth0: an array, not an object");
  expect_refused(R"({"lldp": {"interface": {"eth0": {"port": {}}}}})", "lldp.interface.eth0.chassis: missing");
  expect_refused(R"({"lldp": {"interface": {"eth0": {"chassis": {"sw": {"id": {}}}}}}})",
                 "lldp.interface.eth0.port: missing");
  expect_refused(R"({"lldp": {"interface": {"eth0": {"chassis": {"sw": {"id": 5}}, "port": {}}}}})",
                 "lldp.interface.eth0.chassis.sw.id: a number, not an object");
  expect_refused(R"({"lldp": {"interface": {"eth0": {"chassis": {"sw": {}}, "port": {"id": {"value": 5}}}}}})",
                 "lldp.interface.eth0.port.id.value: a number, not a string");
  expect_refused(R"({"lldp": {"interface": {"eth0": {"chassis": {}, "port": {"ttl": "12O"}}}}})",
                 "lldp.interface.eth0.port.ttl: \"12O\" is not a number of seconds");
  expect_refused(R"({"lldp": {"interface": {"eth0": {"chassis": {}, "port": {"ttl": "99999999999"}}}}})",
                 "more seconds than a TTL holds");
  expect_refused(R"({"lldp": [{"interface": {"name": "eth0"}}]})", "lldp[0].interface: an object, not an array");
  expect_refused(R"({"lldp": [{"interface": [{"name": 3}]}]})", "lldp[0].interface[0].name: a number, not a string");
  expect_refused(R"({"lldp": [7]})", "lldp[0]: a number, not an object");
}

// A capture cut short, as a killed lldpcli leaves it: refused with LldpcliOutputError (a prefix
// of a JSON document is never one), and nothing else escapes. Every prefix around the raw bytes of
// the hostile name (mid-sequence, mid-escape), every 7th elsewhere: a unit test stays well under a
// second in a debug build.
TEST(LldpcliJson, ACaptureCutShortIsRefusedWithAReason) {
  const std::string text = capture("lldpcli-hostile.json");
  const std::size_t raw = text.find("sw\x01");
  ASSERT_NE(raw, std::string::npos);
  for (std::size_t length = 0; length + 2 < text.size();) {
    EXPECT_THROW(parse_lldpcli_neighbours(text.substr(0, length)), LldpcliOutputError) << length;
    length += length + 40 >= raw && length < raw + 40 ? 1 : 7;
  }
}

std::string entries(std::size_t count) {
  std::string text = R"({"lldp": {"interface": [)";
  for (std::size_t i = 0; i < count; ++i) {
    text +=
        (i ? "," : "") + std::string(R"({"eth)") + std::to_string(i) +
        R"(": {"chassis": {"id": {"type": "local", "value": "c"}}, "port": {"id": {"type": "local", "value": "p"}}}})";
  }
  return text + "]}}";
}

TEST(LldpcliJson, BoundsHostileOutput) {
  EXPECT_EQ(parse_lldpcli_neighbours(entries(kMaxLldpcliNeighbours)).size(), kMaxLldpcliNeighbours);
  expect_refused(entries(kMaxLldpcliNeighbours + 1), "lldp.interface[64].eth64: more than 64 neighbours");
  expect_refused(std::string(100'000, '[') + std::string(100'000, ']'), "nested 100000 deep");
  expect_refused(std::string(kMaxLldpcliOutputBytes + 1, ' '), "more than the 8388608 it is read up to");

  const std::string long_value(100'000, 'v');
  const auto neighbours = parse_lldpcli_neighbours(
      R"({"lldp": {"interface": {")" + long_value + R"(": {"chassis": {")" + long_value + R"(": {"id": {"value": ")" +
      long_value + R"("}}}, "port": {"descr": ")" + long_value + R"("}}}}})");
  ASSERT_EQ(neighbours.size(), 1u);
  EXPECT_EQ(neighbours[0].first, std::string(255, 'v'));
  EXPECT_EQ(neighbours[0].second.system_name, std::string(255, 'v'));
  EXPECT_EQ(neighbours[0].second.chassis_id, std::string(255, 'v'));
  EXPECT_EQ(neighbours[0].second.port_description, std::string(255, 'v'));
}

// Objects of 100,000 members, as lldpcli never writes one: read as ordered_json the agent took
// 12.5 s, each key looked up among all those before it. Now one pass, members in lldpcli's order:
// the 65th interface (counting down, so not the first in sorted order) is the one refused, and a
// port's "id" after 99,998 other members is found.
TEST(LldpcliJson, AnObjectOf100000KeysIsReadInOnePass) {
  const std::string chassis = R"("chassis": {"id": {"type": "mac", "value": "02:00:00:00:00:01"}})";
  const std::string neighbour = "{" + chassis + R"(, "port": {"id": {"type": "ifname", "value": "p1"}, "ttl": "120"}})";
  std::string interfaces;
  for (int i = 99'999; i >= 0; --i) {
    interfaces += fmt::format(R"({}"eth{}": {})", i == 99'999 ? "" : ", ", i, i > 99'935 ? neighbour : "0");
  }
  EXPECT_THAT([&] { parse_lldpcli_neighbours(R"({"lldp": {"interface": {)" + interfaces + "}}}"); },
              ThrowsMessage<LldpcliOutputError>(HasSubstr("lldp.interface.eth99935: more than 64 neighbours")));

  std::string port;
  for (int i = 0; i < 99'998; ++i) port += fmt::format(R"("x{}": {}, )", i, i);
  const auto read = parse_lldpcli_neighbours(R"({"lldp": {"interface": [{"eth1": {)" + chassis + R"(, "port": {)" +
                                             port + R"("id": {"type": "ifname", "value": "p2"}, "ttl": "120"}}}, )" +
                                             R"({"eth0": )" + neighbour + "}]}}");
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].first, "eth1");
  EXPECT_EQ(read[0].second.port_id, "p2");
  EXPECT_EQ(read[0].second.ttl_s, 120u);
  EXPECT_EQ(read[1].first, "eth0");
  EXPECT_EQ(read[1].second.port_id, "p1");
}

}  // namespace
}  // namespace tusk::lldp
