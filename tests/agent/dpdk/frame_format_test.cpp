#include "agent/dpdk/frame_format.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tusk::dpdk {
namespace {

using ::testing::HasSubstr;

FrameSpec untagged_spec() {
  FrameSpec spec;
  spec.dst = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
  spec.src = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
  return spec;
}

FrameSpec tagged_spec(std::uint16_t vlan = 100, std::uint8_t pcp = 5) {
  FrameSpec spec = untagged_spec();
  spec.tagged = true;
  spec.vlan = vlan;
  spec.pcp = pcp;
  return spec;
}

TuskHeader sample_header(std::uint16_t payload_length) {
  TuskHeader h;
  h.flags = kFlagPayloadInverted;
  h.stream_id = 0x0102;
  h.seq = 0x0102030405060708ull;
  h.tx_timestamp_ns = 0x1122334455667788ull;
  h.prbs_state = 0xDEADBEEF;
  h.payload_length = payload_length;
  return h;
}

// A whole frame of frame_size bytes (without FCS), payload filled with a counting pattern.
std::vector<std::uint8_t> build_frame(const FrameSpec& spec, TuskHeader header, std::size_t frame_size) {
  const std::size_t payload = payload_length_for(spec, frame_size);
  header.payload_length = static_cast<std::uint16_t>(payload);
  std::vector<std::uint8_t> frame(frame_size, 0);
  write_headers(spec, header, frame.data());
  for (std::size_t i = 0; i < payload; ++i) frame[header_length(spec) + i] = static_cast<std::uint8_t>(i);
  return frame;
}

ParseStatus parse(const std::vector<std::uint8_t>& frame, ParsedFrame& out,
                  std::uint16_t ethertype = kDefaultEtherType) {
  return parse_headers(frame.data(), frame.size(), out, ethertype);
}

ParseStatus parse(const std::vector<std::uint8_t>& frame) {
  ParsedFrame out;
  return parse(frame, out);
}

// ---- lengths ---------------------------------------------------------------------------

TEST(FrameFormat, HeaderLengthCountsTheVlanTag) {
  EXPECT_EQ(header_length(untagged_spec()), 14u + 34u);
  EXPECT_EQ(header_length(tagged_spec()), 18u + 34u);
}

// ---- round trips -------------------------------------------------------------------------------

TEST(FrameFormat, RoundTripUntagged) {
  const FrameSpec spec = untagged_spec();
  const auto frame = build_frame(spec, sample_header(0), 1500);

  ParsedFrame out;
  ASSERT_EQ(parse(frame, out), ParseStatus::Ok);
  TuskHeader expected = sample_header(1500 - 48);
  EXPECT_EQ(out.header, expected);
  EXPECT_FALSE(out.tagged);
  EXPECT_EQ(out.vlan, 0u);
  EXPECT_EQ(out.pcp, 0u);
  EXPECT_EQ(out.payload_offset, 48u);
  EXPECT_EQ(out.payload, frame.data() + 48);
  EXPECT_EQ(out.payload_length, 1452u);
  EXPECT_EQ(out.payload[0], 0u);
  EXPECT_EQ(out.payload[1451], static_cast<std::uint8_t>(1451));
}

TEST(FrameFormat, RoundTripTagged) {
  const FrameSpec spec = tagged_spec(4094, 7);
  const auto frame = build_frame(spec, sample_header(0), 64);

  ParsedFrame out;
  ASSERT_EQ(parse(frame, out), ParseStatus::Ok);
  EXPECT_EQ(out.header, sample_header(64 - 52));
  EXPECT_TRUE(out.tagged);
  EXPECT_EQ(out.vlan, 4094u);
  EXPECT_EQ(out.pcp, 7u);
  EXPECT_EQ(out.payload_offset, 52u);
  EXPECT_EQ(out.payload, frame.data() + 52);
  EXPECT_EQ(out.payload_length, 12u);
}

TEST(FrameFormat, RoundTripPriorityTaggedVlanZero) {
  const auto frame = build_frame(tagged_spec(0, 3), sample_header(0), 128);
  ParsedFrame out;
  ASSERT_EQ(parse(frame, out), ParseStatus::Ok);
  EXPECT_TRUE(out.tagged);
  EXPECT_EQ(out.vlan, 0u);
  EXPECT_EQ(out.pcp, 3u);
}

TEST(FrameFormat, RoundTripExtremeFieldValues) {
  TuskHeader h;
  h.flags = 0xFF;
  h.stream_id = 0xFFFF;
  h.seq = ~0ull;
  h.tx_timestamp_ns = ~0ull;
  h.prbs_state = ~0u;
  const FrameSpec spec = untagged_spec();
  const auto frame = build_frame(spec, h, 60);
  ParsedFrame out;
  ASSERT_EQ(parse(frame, out), ParseStatus::Ok);
  h.payload_length = 12;
  EXPECT_EQ(out.header, h);
}

TEST(FrameFormat, TrailingBytesAfterThePayloadAreIgnored) {
  const FrameSpec spec = untagged_spec();
  auto frame = build_frame(spec, sample_header(0), 100);
  frame.insert(frame.end(), {0xAA, 0xBB, 0xCC, 0xDD});  // e.g. an FCS the NIC kept
  ParsedFrame out;
  ASSERT_EQ(parse(frame, out), ParseStatus::Ok);
  EXPECT_EQ(out.payload_length, 52u);
}

TEST(FrameFormat, ConfiguredEtherTypeIsTheOneRecognised) {
  FrameSpec spec = untagged_spec();
  spec.ethertype = 0x88B6;
  const auto frame = build_frame(spec, sample_header(0), 60);
  ParsedFrame out;
  EXPECT_EQ(parse(frame, out, 0x88B6), ParseStatus::Ok);
  EXPECT_EQ(parse(frame, out), ParseStatus::NotTusk);
}

// ---- exact bytes -------------------------------------------------------------------------------

TEST(FrameFormat, KnownTaggedFrameHasExactBytes) {
  const FrameSpec spec = tagged_spec(100, 5);
  std::vector<std::uint8_t> frame(52, 0xEE);
  write_headers(spec, sample_header(16), frame.data());

  // CRC-32C of the 30 header bytes was computed independently (bitwise reference in Python).
  const std::vector<std::uint8_t> expected = {
      0x02, 0x00, 0x00, 0x00, 0x00, 0x02,              // dst
      0x02, 0x00, 0x00, 0x00, 0x00, 0x01,              // src
      0x81, 0x00, 0xA0, 0x64,                          // 802.1Q: PCP 5, DEI 0, VID 100
      0x88, 0xB5,                                      // EtherType
      0x54, 0x53, 0x4B, 0x31,                          // magic "TSK1"
      0x01,                                            // version
      0x01,                                            // flags: inverted
      0x01, 0x02,                                      // stream id
      0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // seq
      0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,  // TX timestamp
      0xDE, 0xAD, 0xBE, 0xEF,                          // PRBS state
      0x00, 0x10,                                      // payload length 16
      0x4D, 0x4B, 0x43, 0x85,                          // CRC-32C
  };
  EXPECT_EQ(frame, expected);
}

TEST(FrameFormat, KnownMinimumUntaggedFrameHasExactBytes) {
  const FrameSpec spec = untagged_spec();
  TuskHeader h;
  h.stream_id = 7;
  h.prbs_state = 1;
  h.payload_length = static_cast<std::uint16_t>(payload_length_for(spec, 60));
  std::vector<std::uint8_t> frame(48, 0xEE);
  write_headers(spec, h, frame.data());

  const std::vector<std::uint8_t> expected = {
      0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,  // MACs
      0x88, 0xB5,                                                              // EtherType
      0x54, 0x53, 0x4B, 0x31, 0x01, 0x00, 0x00, 0x07,                          // magic, v1, flags, stream 7
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                          // seq 0
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                          // timestamp 0
      0x00, 0x00, 0x00, 0x01, 0x00, 0x0C,                                      // PRBS state 1, 12 bytes
      0xD4, 0xB3, 0x94, 0xF7,                                                  // CRC-32C
  };
  EXPECT_EQ(frame, expected);
}

// ---- corruption --------------------------------------------------------------------------------

// Every bit from the EtherType to the end of the Tusk header: the frame must never parse as Ok,
// since a flipped seq or stream id would otherwise be booked against the wrong stream; past the
// EtherType it is our frame, damaged (BadHeader), never a foreign one that would read as lost.
void expect_every_header_bit_flip_detected(const FrameSpec& spec) {
  const auto clean = build_frame(spec, sample_header(0), 128);
  const std::size_t ethertype_at = header_length(spec) - kTuskHeaderLength - 2;
  const std::size_t magic_at = ethertype_at + 2;
  const std::size_t end = header_length(spec);
  for (std::size_t byte = ethertype_at; byte < end; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      auto frame = clean;
      frame[byte] ^= static_cast<std::uint8_t>(1u << bit);
      // A flipped bit in the magic leaves a frame that is still ours, damaged: not someone else's.
      const ParseStatus expected = byte < magic_at ? ParseStatus::NotTusk : ParseStatus::BadHeader;
      EXPECT_EQ(parse(frame), expected) << "byte " << byte << " bit " << bit << (spec.tagged ? " tagged" : "");
    }
  }
}

TEST(FrameFormat, EverySingleBitFlipInTheTuskHeaderIsDetectedUntagged) {
  expect_every_header_bit_flip_detected(untagged_spec());
}

TEST(FrameFormat, EverySingleBitFlipInTheTuskHeaderIsDetectedTagged) {
  expect_every_header_bit_flip_detected(tagged_spec());
}

TEST(FrameFormat, TwoBitFlipsInTheTuskHeaderAreDetected) {
  // CRC-32C has Hamming distance well above 2 at this length; check every pair past the magic.
  const FrameSpec spec = untagged_spec();
  const auto clean = build_frame(spec, sample_header(0), 64);
  const std::size_t first = 14 + 4;
  const std::size_t last_bit = (14 + kTuskHeaderLength) * 8;
  for (std::size_t a = first * 8; a < last_bit; ++a) {
    for (std::size_t b = a + 1; b < last_bit; ++b) {
      auto frame = clean;
      frame[a / 8] ^= static_cast<std::uint8_t>(1u << (a % 8));
      frame[b / 8] ^= static_cast<std::uint8_t>(1u << (b % 8));
      ASSERT_EQ(parse(frame), ParseStatus::BadHeader) << "bits " << a << ", " << b;
    }
  }
}

// The receiver tells a damaged frame's stream from what its header still seems to say.
TEST(FrameFormat, ADamagedHeaderStillShowsItsStreamAndSequenceNumber) {
  const FrameSpec spec = untagged_spec();
  TuskHeader header = sample_header(0);
  header.stream_id = 7;
  header.seq = 123456;
  auto frame = build_frame(spec, header, 64);
  frame[14] ^= 0x10;  // a bit of the magic
  ParsedFrame out;
  ASSERT_EQ(parse(frame, out), ParseStatus::BadHeader);
  const auto damaged = damaged_header(frame.data(), frame.size(), out);
  ASSERT_TRUE(damaged.has_value());
  EXPECT_EQ(damaged->stream_id, 7u);
  EXPECT_EQ(damaged->seq, 123456u);
  // Three bits off the magic is no frame of ours.
  frame[14] ^= 0x07;
  EXPECT_EQ(parse(frame, out), ParseStatus::NotTusk);
}

TEST(FrameFormat, MacAndVlanTagAreNotCoveredByTheHeaderCrc) {
  // By design: switches may rewrite the tag, and the Ethernet FCS guards the MACs.
  const FrameSpec spec = tagged_spec(100, 5);
  auto frame = build_frame(spec, sample_header(0), 64);
  frame[0] ^= 0x01;
  frame[15] ^= 0x01;  // VID 100 -> 101
  ParsedFrame out;
  ASSERT_EQ(parse(frame, out), ParseStatus::Ok);
  EXPECT_EQ(out.vlan, 101u);
}

TEST(FrameFormat, OtherVersionWithValidCrcIsBadHeader) {
  TuskHeader h = sample_header(0);
  h.version = 2;
  const auto frame = build_frame(untagged_spec(), h, 64);
  EXPECT_EQ(parse(frame), ParseStatus::BadHeader);
}

// ---- truncation --------------------------------------------------------------------------------

TEST(FrameFormat, EveryTruncationIsReportedAsTruncated) {
  for (const FrameSpec& spec : {untagged_spec(), tagged_spec()}) {
    const auto frame = build_frame(spec, sample_header(0), 80);
    for (std::size_t length = 0; length < frame.size(); ++length) {
      ParsedFrame out;
      EXPECT_EQ(parse_headers(frame.data(), length, out), ParseStatus::Truncated)
          << "length " << length << (spec.tagged ? " tagged" : "");
    }
    EXPECT_EQ(parse(frame), ParseStatus::Ok);
  }
}

TEST(FrameFormat, PayloadLengthLongerThanTheFrameIsTruncated) {
  // CRC-valid header that claims more payload than arrived (e.g. a receive buffer too small).
  const FrameSpec spec = untagged_spec();
  std::vector<std::uint8_t> frame(60, 0);
  write_headers(spec, sample_header(13), frame.data());  // 48 + 13 = 61 > 60
  EXPECT_EQ(parse(frame), ParseStatus::Truncated);
  write_headers(spec, sample_header(12), frame.data());
  EXPECT_EQ(parse(frame), ParseStatus::Ok);
}

// ---- foreign frames ----------------------------------------------------------------------------

std::vector<std::uint8_t> foreign_frame(std::uint16_t ethertype, std::size_t size) {
  std::vector<std::uint8_t> frame(size, 0x45);
  frame[12] = static_cast<std::uint8_t>(ethertype >> 8);
  frame[13] = static_cast<std::uint8_t>(ethertype);
  return frame;
}

TEST(FrameFormat, ForeignFramesAreNotTusk) {
  EXPECT_EQ(parse(foreign_frame(0x0800, 60)), ParseStatus::NotTusk);  // IPv4
  EXPECT_EQ(parse(foreign_frame(0x0806, 42)), ParseStatus::NotTusk);  // ARP, unpadded
  EXPECT_EQ(parse(foreign_frame(0x86DD, 90)), ParseStatus::NotTusk);  // IPv6
  EXPECT_EQ(parse(foreign_frame(0x88CC, 60)), ParseStatus::NotTusk);  // LLDP
  EXPECT_EQ(parse(foreign_frame(0x0800, 14)), ParseStatus::NotTusk);  // header only

  auto tagged_ipv4 = foreign_frame(0x8100, 64);
  tagged_ipv4[14] = 0x00;
  tagged_ipv4[15] = 0x64;
  tagged_ipv4[16] = 0x08;
  tagged_ipv4[17] = 0x00;
  EXPECT_EQ(parse(tagged_ipv4), ParseStatus::NotTusk);
}

TEST(FrameFormat, OurEtherTypeWithoutOurMagicIsNotTusk) {
  // 0x88B5 is the IEEE local experimental type: other tools on the lab network may use it.
  auto frame = foreign_frame(kDefaultEtherType, 64);
  EXPECT_EQ(parse(frame), ParseStatus::NotTusk);
  frame.resize(18);  // magic readable, header not
  EXPECT_EQ(parse(frame), ParseStatus::NotTusk);
}

// ---- payload_length_for and validation ---------------------------------------------------------

TEST(FrameFormat, PayloadLengthForFillsTheFrame) {
  EXPECT_EQ(payload_length_for(untagged_spec(), 60), 12u);
  EXPECT_EQ(payload_length_for(tagged_spec(), 60), 8u);
  EXPECT_EQ(payload_length_for(untagged_spec(), 64), 16u);
  EXPECT_EQ(payload_length_for(untagged_spec(), 1500), 1452u);
  EXPECT_EQ(payload_length_for(tagged_spec(), 9216), 9164u);
  EXPECT_EQ(payload_length_for(untagged_spec(), 65535 + 48), 65535u);
}

TEST(FrameFormat, PayloadLengthForRejectsFramesBelowTheMinimum) {
  try {
    payload_length_for(untagged_spec(), 59);
    FAIL() << "59 B accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("59 B is below the Ethernet minimum of 60 B"));
  }
  EXPECT_THROW(payload_length_for(tagged_spec(), 0), std::invalid_argument);
  EXPECT_THROW(payload_length_for(tagged_spec(), 48), std::invalid_argument);
}

TEST(FrameFormat, PayloadLengthForRejectsPayloadsTheLengthFieldCannotHold) {
  try {
    payload_length_for(untagged_spec(), 65536 + 48);
    FAIL() << "payload of 65536 B accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("65536 B payload"));
  }
}

TEST(FrameFormat, ValidateRejectsBadSpecs) {
  EXPECT_NO_THROW(validate(untagged_spec()));
  EXPECT_NO_THROW(validate(tagged_spec(0, 0)));
  EXPECT_NO_THROW(validate(tagged_spec(4094, 7)));

  try {
    validate(tagged_spec(4095, 0));
    FAIL() << "VLAN 4095 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("VLAN id 4095 is out of range 0..4094"));
  }
  EXPECT_THROW(validate(tagged_spec(100, 8)), std::invalid_argument);

  FrameSpec untagged_with_vlan = untagged_spec();
  untagged_with_vlan.vlan = 10;
  EXPECT_THROW(validate(untagged_with_vlan), std::invalid_argument);

  FrameSpec length_field = untagged_spec();
  length_field.ethertype = 0x05DC;
  EXPECT_THROW(validate(length_field), std::invalid_argument);

  FrameSpec vlan_type = untagged_spec();
  vlan_type.ethertype = 0x8100;
  try {
    validate(vlan_type);
    FAIL() << "EtherType 0x8100 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("0x8100 is a VLAN tag type"));
  }
  EXPECT_THROW(payload_length_for(vlan_type, 100), std::invalid_argument);
}

TEST(FrameFormat, ParseStatusNames) {
  EXPECT_STREQ(to_string(ParseStatus::Ok), "ok");
  EXPECT_STREQ(to_string(ParseStatus::NotTusk), "not a Tusk frame");
  EXPECT_STREQ(to_string(ParseStatus::BadHeader), "bad Tusk header");
  EXPECT_STREQ(to_string(ParseStatus::Truncated), "truncated");
}

TEST(FrameFormat, ArrivedTagIsTheFramesOrTheOneTheDriverStripped) {
  ParsedFrame in_frame;
  in_frame.tagged = true;
  in_frame.vlan = 100;
  in_frame.pcp = 5;
  const ArrivedTag from_frame = arrived_tag(in_frame, false, 0);
  EXPECT_TRUE(from_frame.tagged);
  EXPECT_EQ(from_frame.vlan, 100u);
  EXPECT_EQ(from_frame.pcp, 5u);
  // Stripped by the driver: the frame bytes are untagged, the TCI (PCP 3, DEI 1, VID 4094) is beside it.
  const ArrivedTag stripped = arrived_tag(ParsedFrame{}, true, static_cast<std::uint16_t>(3 << 13 | 1 << 12 | 4094));
  EXPECT_TRUE(stripped.tagged);
  EXPECT_EQ(stripped.vlan, 4094u);
  EXPECT_EQ(stripped.pcp, 3u);
  EXPECT_FALSE(arrived_tag(ParsedFrame{}, false, 0).tagged);
}

TEST(FrameFormat, CheckTagTellsAMismatchedVlanFromARemarkedPriority) {
  FrameSpec sent;
  sent.tagged = true;
  sent.vlan = 100;
  sent.pcp = 5;
  EXPECT_EQ(check_tag(sent, {true, 100, 5}), TagCheck::AsSent);
  EXPECT_EQ(check_tag(sent, {true, 100, 0}), TagCheck::PcpChanged);
  EXPECT_EQ(check_tag(sent, {true, 200, 5}), TagCheck::VlanMismatch);
  EXPECT_EQ(check_tag(sent, {false, 0, 0}), TagCheck::VlanMismatch);
  const FrameSpec untagged;
  EXPECT_EQ(check_tag(untagged, {false, 0, 0}), TagCheck::AsSent);
  EXPECT_EQ(check_tag(untagged, {true, 0, 3}), TagCheck::VlanMismatch) << "a priority tag where none was sent";
  FrameSpec priority;  // VLAN 0 carrying PCP 3
  priority.tagged = true;
  priority.pcp = 3;
  EXPECT_EQ(check_tag(priority, {true, 0, 3}), TagCheck::AsSent);
}

}  // namespace
}  // namespace tusk::dpdk
