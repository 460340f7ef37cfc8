// Test frames inside IPv4 and UDP (encapsulation ipv4_udp): what routers forward and ECMP spreads
// by UDP port. Checked against the RFCs' own arithmetic, not against our writer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "agent/dpdk/frame_format.hpp"
#include "tests/support/routed_host.hpp"

namespace tusk::dpdk {
namespace {

using ::testing::HasSubstr;
using tusk::testing::be16;

constexpr std::uint32_t address(int a, int b, int c, int d) {
  return static_cast<std::uint32_t>(a) << 24 | static_cast<std::uint32_t>(b) << 16 |
         static_cast<std::uint32_t>(c) << 8 | static_cast<std::uint32_t>(d);
}

FrameSpec routed_spec(bool tagged = false) {
  FrameSpec spec;
  spec.dst = {0x02, 0x74, 0x6b, 0x01, 0x00, 0x01};  // the gateway
  spec.src = {0x02, 0x74, 0x6b, 0x01, 0x01, 0x10};
  spec.tagged = tagged;
  spec.vlan = tagged ? 200 : 0;
  spec.encapsulation = Encapsulation::Ipv4Udp;
  spec.ip.src_address = address(192, 168, 101, 11);
  spec.ip.dst_address = address(192, 168, 102, 11);
  spec.ip.src_port = 49153;
  spec.ip.dst_port = 4791;
  spec.ip.dscp = 26;  // AF31
  spec.ip.ecn = 2;    // ECT(0)
  spec.ip.ttl = 17;
  return spec;
}

TuskHeader sample_header() {
  TuskHeader h;
  h.stream_id = 7;
  h.seq = 123456789;
  h.tx_timestamp_ns = 42;
  h.prbs_state = 0x1234567;
  return h;
}

std::vector<std::uint8_t> build(const FrameSpec& spec, std::size_t frame_size) {
  TuskHeader header = sample_header();
  header.payload_length = static_cast<std::uint16_t>(payload_length_for(spec, frame_size));
  std::vector<std::uint8_t> frame(frame_size, 0);
  write_headers(spec, header, frame.data());
  for (std::size_t i = header_length(spec); i < frame_size; ++i) frame[i] = static_cast<std::uint8_t>(i * 13);
  return frame;
}

ParseStatus parse(const std::vector<std::uint8_t>& frame, const FrameSpec& spec, ParsedFrame& out) {
  return parse_headers(frame.data(), frame.size(), out, match_for(spec));
}

TEST(FrameFormatIpv4, HeadersAreEthernetIpv4UdpThenTusk) {
  EXPECT_EQ(header_length(routed_spec()), 14u + 20u + 8u + 34u);
  EXPECT_EQ(header_length(routed_spec(true)), 18u + 20u + 8u + 34u);
  EXPECT_EQ(payload_length_for(routed_spec(), 1000), 1000u - 76u);
}

TEST(FrameFormatIpv4, FieldsAreWhereRfc791AndRfc768PutThem) {
  const FrameSpec spec = routed_spec();
  const auto frame = build(spec, 200);
  EXPECT_EQ(be16(frame, 12), 0x0800);
  const std::size_t ip = 14;
  EXPECT_EQ(frame[ip], 0x45);
  EXPECT_EQ(frame[ip + 1], (26 << 2) | 2);
  EXPECT_EQ(be16(frame, ip + 2), 200 - 14);  // total length: the IP datagram
  EXPECT_EQ(be16(frame, ip + 6), 0x4000);    // DF, no fragment offset
  EXPECT_EQ(frame[ip + 8], 17);
  EXPECT_EQ(frame[ip + 9], 17);  // UDP
  EXPECT_EQ(std::vector<std::uint8_t>(frame.begin() + ip + 12, frame.begin() + ip + 20),
            (std::vector<std::uint8_t>{192, 168, 101, 11, 192, 168, 102, 11}));
  const std::size_t udp = ip + 20;
  EXPECT_EQ(be16(frame, udp), 49153);
  EXPECT_EQ(be16(frame, udp + 2), 4791);
  EXPECT_EQ(be16(frame, udp + 4), 200 - 14 - 20);
  EXPECT_EQ(be16(frame, udp + 6), 0) << "no UDP checksum: a flipped payload bit must reach the receiver";
}

// RFC 1071: summing every 16-bit word of a correct header, checksum included, gives 0xFFFF.
TEST(FrameFormatIpv4, HeaderChecksumSumsToAllOnesForEverySizeAndField) {
  for (const std::size_t size : {80u, 77u, 128u, 1500u, 9000u}) {
    for (const std::uint8_t ttl : {std::uint8_t{1}, std::uint8_t{64}, std::uint8_t{255}}) {
      FrameSpec spec = routed_spec(size % 2 == 0);
      spec.ip.ttl = ttl;
      const auto frame = build(spec, size);
      const std::size_t ip = spec.tagged ? 18 : 14;
      std::uint32_t sum = 0;
      for (std::size_t i = 0; i < 20; i += 2) sum += be16(frame, ip + i);
      while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
      EXPECT_EQ(sum, 0xFFFFu) << "size " << size << " ttl " << int{ttl};
    }
  }
}

TEST(FrameFormatIpv4, RoundTripKeepsTheTuskHeaderPayloadAndWhatTheRoutersMayChange) {
  for (const bool tagged : {false, true}) {
    const FrameSpec spec = routed_spec(tagged);
    auto frame = build(spec, 512);
    ParsedFrame out;
    ASSERT_EQ(parse(frame, spec, out), ParseStatus::Ok);
    TuskHeader expected = sample_header();
    expected.payload_length = static_cast<std::uint16_t>(512 - header_length(spec));
    EXPECT_EQ(out.header, expected);
    EXPECT_EQ(out.payload_offset, header_length(spec));
    EXPECT_EQ(out.payload_length, 512 - header_length(spec));
    EXPECT_EQ(out.ip.src_address, spec.ip.src_address);
    EXPECT_EQ(out.ip.dst_address, spec.ip.dst_address);
    EXPECT_EQ(out.ip.src_port, 49153);
    EXPECT_EQ(out.ip.dst_port, 4791);
    EXPECT_EQ(out.ip.dscp, 26);
    EXPECT_EQ(out.ip.ecn, 2);
    EXPECT_EQ(out.ip.ttl, 17);
    EXPECT_EQ(out.tagged, tagged);
  }
}

// A router decrements the TTL, may set ECN's congestion mark, and updates the checksum
// incrementally (RFC 1624): the frame is still ours and says what changed.
TEST(FrameFormatIpv4, AFrameTwoRoutersForwardedParsesWithItsNewTtlAndEcn) {
  const FrameSpec spec = routed_spec();
  auto frame = build(spec, 256);
  const std::size_t ip = 14;
  frame[ip + 8] = static_cast<std::uint8_t>(frame[ip + 8] - 2);
  frame[ip + 1] = static_cast<std::uint8_t>(frame[ip + 1] | 0x03);  // CE
  frame[ip + 10] = frame[ip + 11] = 0;
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < 20; i += 2) sum += be16(frame, ip + i);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  frame[ip + 10] = static_cast<std::uint8_t>(~sum >> 8);
  frame[ip + 11] = static_cast<std::uint8_t>(~sum);
  ParsedFrame out;
  ASSERT_EQ(parse(frame, spec, out), ParseStatus::Ok);
  EXPECT_EQ(out.ip.ttl, 15);
  EXPECT_EQ(out.ip.ecn, 3);
}

// Every single bit flip in the IPv4 header is caught by its checksum (or makes the frame not
// ours): a damaged header never parses as Ok.
TEST(FrameFormatIpv4, EveryBitFlipInTheIpv4HeaderIsBadHeaderOrNotOurs) {
  const FrameSpec spec = routed_spec();
  const auto clean = build(spec, 128);
  for (std::size_t byte = 14; byte < 34; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      auto frame = clean;
      frame[byte] ^= static_cast<std::uint8_t>(1u << bit);
      ParsedFrame out;
      const ParseStatus status = parse(frame, spec, out);
      EXPECT_TRUE(status == ParseStatus::BadHeader || status == ParseStatus::NotTusk)
          << "byte " << byte << " bit " << bit << ": " << to_string(status);
    }
  }
  // A flipped address bit is still our frame, damaged: counted, not ignored.
  auto frame = clean;
  frame[14 + 15] ^= 0x01;
  ParsedFrame out;
  EXPECT_EQ(parse(frame, spec, out), ParseStatus::BadHeader);
}

TEST(FrameFormatIpv4, OtherProtocolsPortsFragmentsAndL2FramesAreNotOurs) {
  const FrameSpec spec = routed_spec();
  const auto clean = build(spec, 128);
  ParsedFrame out;
  FrameMatch other_port = match_for(spec);
  other_port.udp_port = 4792;
  EXPECT_EQ(parse_headers(clean.data(), clean.size(), out, other_port), ParseStatus::NotTusk);
  EXPECT_EQ(parse_headers(clean.data(), clean.size(), out, FrameMatch{}), ParseStatus::NotTusk)
      << "an L2 receiver does not take IPv4 frames";

  FrameSpec l2;
  const auto l2_frame = [&] {
    TuskHeader header = sample_header();
    header.payload_length = static_cast<std::uint16_t>(payload_length_for(l2, 128));
    std::vector<std::uint8_t> bytes(128, 0);
    write_headers(l2, header, bytes.data());
    return bytes;
  }();
  EXPECT_EQ(parse(l2_frame, spec, out), ParseStatus::NotTusk) << "an IPv4 receiver does not take L2 frames";

  // A fragment (MF set), with its checksum made right: still not ours.
  auto fragment = clean;
  fragment[14 + 6] |= 0x20;
  fragment[14 + 10] = fragment[14 + 11] = 0;
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < 20; i += 2) sum += be16(fragment, 14 + i);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  fragment[14 + 10] = static_cast<std::uint8_t>(~sum >> 8);
  fragment[14 + 11] = static_cast<std::uint8_t>(~sum);
  EXPECT_EQ(parse(fragment, spec, out), ParseStatus::NotTusk);
}

TEST(FrameFormatIpv4, EveryTruncationIsTruncatedOrNotYetOurs) {
  const FrameSpec spec = routed_spec();
  const auto frame = build(spec, 160);
  for (std::size_t length = 0; length < frame.size(); ++length) {
    ParsedFrame out;
    const ParseStatus status = parse_headers(frame.data(), length, out, match_for(spec));
    EXPECT_EQ(status, ParseStatus::Truncated) << "length " << length;
  }
}

TEST(FrameFormatIpv4, BadSpecsAreRefusedNamingTheField) {
  const auto refused = [](const std::function<void(FrameSpec&)>& change, const char* words) {
    FrameSpec spec = routed_spec();
    change(spec);
    try {
      validate(spec);
      ADD_FAILURE() << "accepted; expected: " << words;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(words));
    }
  };
  refused([](FrameSpec& s) { s.ip.dscp = 64; }, "DSCP 64");
  refused([](FrameSpec& s) { s.ip.ecn = 4; }, "ECN 4");
  refused([](FrameSpec& s) { s.ip.ttl = 0; }, "TTL 0");
  refused([](FrameSpec& s) { s.ip.dst_port = 0; }, "UDP port 0");
  refused([](FrameSpec& s) { s.ip.src_address = 0; }, "source IPv4 address");
  refused([](FrameSpec& s) { s.ip.dst_address = 0; }, "destination IPv4 address");
  refused([](FrameSpec& s) { s.ethertype = 0x9000; }, "always carry 0x0800");
  EXPECT_THAT([] { payload_length_for(routed_spec(), 64); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("(IPv4/UDP)")));
  EXPECT_STREQ(to_string(Encapsulation::Ipv4Udp), "ipv4_udp");
}

}  // namespace
}  // namespace tusk::dpdk
