// The DPDK port's own IPv4 presence: ARP answered and asked, ping answered, next hops chosen,
// addresses parsed with errors that say what is wrong. Frames checked at RFC 826/792 offsets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "agent/dpdk/neighbour.hpp"
#include "tests/support/routed_host.hpp"

namespace tusk::dpdk {
namespace {

using ::testing::HasSubstr;
using tusk::testing::be16;
using tusk::testing::ip;
using tusk::testing::kLeafMac;
using tusk::testing::kOurMac;
using tusk::testing::ours;

// What the leaf sends: "who has TARGET? tell 192.168.101.1".
std::vector<std::uint8_t> leaf_asks_for(std::uint32_t target) {
  Ipv4Interface leaf = parse_ipv4_interface("192.168.101.1/24");
  leaf.mac = kLeafMac;
  std::vector<std::uint8_t> frame(60);
  write_arp_request(leaf, target, frame.data());
  return frame;
}

// RFC 1071's sum of `length` bytes from `from`: an odd last byte counts as if a zero followed it.
std::uint16_t checksum_of(const std::vector<std::uint8_t>& f, std::size_t from, std::size_t length) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < length; i += 2) sum += i + 1 < length ? be16(f, from + i) : f.at(from + i) << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(sum);
}

TEST(Neighbour, AnArpRequestForOurAddressGetsAReplyFromOurMac) {
  const auto request = leaf_asks_for(ip("192.168.101.11"));
  std::vector<std::uint8_t> reply(60);
  ASSERT_EQ(answer_for_us(ours(), request.data(), request.size(), reply.data()), 60u);
  EXPECT_EQ(std::vector<std::uint8_t>(reply.begin(), reply.begin() + 6),
            std::vector<std::uint8_t>(kLeafMac.begin(), kLeafMac.end()));
  EXPECT_EQ(be16(reply, 12), 0x0806);
  const auto arp = parse_arp(reply.data(), reply.size());
  ASSERT_TRUE(arp);
  EXPECT_EQ(arp->operation, 2);
  EXPECT_EQ(arp->sender_mac, kOurMac);
  EXPECT_EQ(arp->sender_address, ip("192.168.101.11"));
  EXPECT_EQ(arp->target_mac, kLeafMac);
  EXPECT_EQ(arp->target_address, ip("192.168.101.1"));
}

TEST(Neighbour, RequestsForOthersRepliesAndOtherFramesGetNoAnswer) {
  std::vector<std::uint8_t> reply(1500);
  const auto for_someone_else = leaf_asks_for(ip("192.168.101.12"));
  EXPECT_EQ(answer_for_us(ours(), for_someone_else.data(), for_someone_else.size(), reply.data()), 0u);
  auto a_reply = leaf_asks_for(ip("192.168.101.11"));
  a_reply[21] = 2;  // operation: reply
  EXPECT_EQ(answer_for_us(ours(), a_reply.data(), a_reply.size(), reply.data()), 0u);
  const std::vector<std::uint8_t> short_frame(20, 0);
  EXPECT_EQ(answer_for_us(ours(), short_frame.data(), short_frame.size(), reply.data()), 0u);
  Ipv4Interface unaddressed;
  const auto request = leaf_asks_for(ip("192.168.101.11"));
  EXPECT_EQ(answer_for_us(unaddressed, request.data(), request.size(), reply.data()), 0u)
      << "a port without an address answers nothing";
}

TEST(Neighbour, OurRequestIsABroadcastWhoHasFromUs) {
  std::vector<std::uint8_t> frame(60, 0xAA);
  ASSERT_EQ(write_arp_request(ours(), ip("192.168.101.1"), frame.data()), 60u);
  EXPECT_EQ(std::vector<std::uint8_t>(frame.begin(), frame.begin() + 6), std::vector<std::uint8_t>(6, 0xFF));
  const auto arp = parse_arp(frame.data(), frame.size());
  ASSERT_TRUE(arp);
  EXPECT_EQ(arp->operation, 1);
  EXPECT_EQ(arp->sender_mac, kOurMac);
  EXPECT_EQ(arp->sender_address, ip("192.168.101.11"));
  EXPECT_EQ(arp->target_address, ip("192.168.101.1"));
  EXPECT_EQ(std::vector<std::uint8_t>(frame.begin() + 42, frame.end()), std::vector<std::uint8_t>(18, 0))
      << "padding zeroed";
}

// An echo request as Linux's ping sends it, checksums computed here.
std::vector<std::uint8_t> ping_to(std::uint32_t destination, std::size_t data_bytes) {
  std::vector<std::uint8_t> f(14 + 20 + 8 + data_bytes, 0);
  for (int i = 0; i < 6; ++i) f[i] = kOurMac[i], f[6 + i] = kLeafMac[i];
  f[12] = 0x08;
  f[14] = 0x45;
  const std::size_t total = 20 + 8 + data_bytes;
  f[16] = static_cast<std::uint8_t>(total >> 8), f[17] = static_cast<std::uint8_t>(total);
  f[20] = 0x40;  // DF
  f[22] = 64, f[23] = 1;
  const std::uint32_t source = ip("192.168.101.1");
  for (int i = 0; i < 4; ++i)
    f[26 + i] = static_cast<std::uint8_t>(source >> (24 - 8 * i)),
           f[30 + i] = static_cast<std::uint8_t>(destination >> (24 - 8 * i));
  const std::uint16_t ip_sum = static_cast<std::uint16_t>(~checksum_of(f, 14, 20));
  f[24] = static_cast<std::uint8_t>(ip_sum >> 8), f[25] = static_cast<std::uint8_t>(ip_sum);
  f[34] = 8;
  f[38] = 0x12, f[39] = 0x34, f[40] = 0, f[41] = 7;  // identifier, sequence
  for (std::size_t i = 0; i < data_bytes; ++i) f[42 + i] = static_cast<std::uint8_t>(i);
  const std::uint16_t icmp_sum = static_cast<std::uint16_t>(~checksum_of(f, 34, 8 + data_bytes));
  f[36] = static_cast<std::uint8_t>(icmp_sum >> 8), f[37] = static_cast<std::uint8_t>(icmp_sum);
  return f;
}

TEST(Neighbour, APingToOurAddressIsAnsweredWithValidChecksumsAndItsData) {
  for (const std::size_t data : {56u, 1u, 1400u}) {
    const auto request = ping_to(ip("192.168.101.11"), data);
    std::vector<std::uint8_t> reply(std::max<std::size_t>(request.size(), 60));
    const std::size_t length = answer_for_us(ours(), request.data(), request.size(), reply.data());
    ASSERT_EQ(length, std::max<std::size_t>(request.size(), 60)) << data;
    EXPECT_EQ(std::vector<std::uint8_t>(reply.begin(), reply.begin() + 6),
              std::vector<std::uint8_t>(kLeafMac.begin(), kLeafMac.end()));
    EXPECT_EQ(checksum_of(reply, 14, 20), 0xFFFF) << "IPv4 header checksum";
    EXPECT_EQ(checksum_of(reply, 34, 8 + data + (data % 2)), 0xFFFF) << "ICMP checksum";
    EXPECT_EQ(reply[34], 0) << "echo reply";
    EXPECT_EQ(be16(reply, 38), 0x1234);
    EXPECT_EQ(be16(reply, 40), 7);
    EXPECT_EQ(std::vector<std::uint8_t>(reply.begin() + 26, reply.begin() + 30),
              (std::vector<std::uint8_t>{192, 168, 101, 11}));
    EXPECT_EQ(std::vector<std::uint8_t>(reply.begin() + 30, reply.begin() + 34),
              (std::vector<std::uint8_t>{192, 168, 101, 1}));
    EXPECT_EQ(std::vector<std::uint8_t>(reply.begin() + 42, reply.begin() + 42 + static_cast<long>(data)),
              std::vector<std::uint8_t>(request.begin() + 42, request.end()));
  }
  auto elsewhere = ping_to(ip("192.168.101.12"), 56);
  std::vector<std::uint8_t> reply(elsewhere.size());
  EXPECT_EQ(answer_for_us(ours(), elsewhere.data(), elsewhere.size(), reply.data()), 0u);
  auto damaged = ping_to(ip("192.168.101.11"), 56);
  damaged[22] ^= 0x01;  // TTL flipped: the IPv4 checksum fails
  EXPECT_EQ(answer_for_us(ours(), damaged.data(), damaged.size(), reply.data()), 0u);
  auto truncated = ping_to(ip("192.168.101.11"), 56);
  EXPECT_EQ(answer_for_us(ours(), truncated.data(), truncated.size() - 10, reply.data()), 0u);
}

TEST(Neighbour, NextHopIsThePeerOnOurSubnetElseTheGateway) {
  EXPECT_EQ(next_hop(ours(), ip("192.168.101.12")), ip("192.168.101.12"));
  EXPECT_EQ(next_hop(ours(), ip("192.168.102.11")), ip("192.168.101.1"));
  const Ipv4Interface no_gateway = parse_ipv4_interface("10.0.0.5/30");
  EXPECT_EQ(next_hop(no_gateway, ip("10.0.0.6")), ip("10.0.0.6"));
  EXPECT_THAT([&] { next_hop(no_gateway, ip("10.0.1.6")); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("10.0.1.6 is not on this port's subnet (10.0.0.5/30)")));
}

TEST(Neighbour, AddressesAreParsedAndBadOnesSayWhatIsWrong) {
  const auto parsed = parse_ipv4_interface("192.168.101.11/24,gw=192.168.101.1");
  EXPECT_EQ(parsed.address, ip("192.168.101.11"));
  EXPECT_EQ(parsed.prefix_length, 24);
  EXPECT_EQ(parsed.gateway, ip("192.168.101.1"));
  EXPECT_EQ(to_string(parsed), "192.168.101.11/24 gw 192.168.101.1");
  EXPECT_EQ(parse_ipv4_interface("172.16.1.2/31").prefix_length, 31)
      << "a /31 point-to-point link has no network address";
  const auto refused = [](const char* text, const char* words) {
    EXPECT_THAT([&] { parse_ipv4_interface(text); }, ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr(words)))
        << text;
  };
  refused("192.168.101.11", "with its prefix");
  refused("192.168.101.311/24", "is not an IPv4 address");
  refused("192.168.101.11/33", "prefix length '33' is not 1..32");
  refused("192.168.101.11/x", "prefix length 'x'");
  refused("192.168.101.0/24", "network or broadcast address");
  refused("192.168.101.255/24", "network or broadcast address");
  refused("192.168.101.11/24,gw=192.168.102.1", "gateway 192.168.102.1 is not another host on 192.168.101.0/24");
  refused("192.168.101.11/24,gw=192.168.101.11", "is not another host");
  refused("192.168.101.11/24,via=192.168.101.1", "only gw=GATEWAY");
  refused("192.168.101.11/24,gw=nowhere", "gateway 'nowhere' is not an IPv4 address");
}

}  // namespace
}  // namespace tusk::dpdk

namespace tusk::dpdk {
namespace {

// The receive loop's pre-filter: true for every frame answer_for_us answers, false for test frames
// and for ARP and pings meant for others.
TEST(Neighbour, ThePreFilterPassesEverythingAnsweredAndNoTestFrame) {
  const auto passes = [](const std::vector<std::uint8_t>& frame) {
    return may_ask_for_us(ours(), frame.data(), frame.size());
  };
  EXPECT_TRUE(passes(leaf_asks_for(ip("192.168.101.11"))));
  EXPECT_TRUE(passes(ping_to(ip("192.168.101.11"), 56)));
  EXPECT_FALSE(passes(leaf_asks_for(ip("192.168.101.12"))));
  EXPECT_FALSE(passes(ping_to(ip("192.168.101.12"), 56)));
  FrameSpec spec;
  spec.encapsulation = Encapsulation::Ipv4Udp;
  spec.ip.src_address = ip("192.168.102.10");
  spec.ip.dst_address = ip("192.168.101.11");
  std::vector<std::uint8_t> test_frame(128);
  write_headers(spec, TuskHeader{}, test_frame.data());
  EXPECT_FALSE(passes(test_frame));
  EXPECT_FALSE(may_ask_for_us(Ipv4Interface{}, test_frame.data(), test_frame.size())) << "a port without an address";
  const auto request = leaf_asks_for(ip("192.168.101.11"));
  EXPECT_FALSE(may_ask_for_us(ours(), request.data(), 41)) << "shorter than an ARP packet";
}

}  // namespace
}  // namespace tusk::dpdk
