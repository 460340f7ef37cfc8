// LLDPDU frames (IEEE 802.1AB-2016): real frames lldpd 1.0.16 sent between two network namespaces,
// frames built by hand for each subtype and each way a frame is malformed, every prefix of a good
// frame, and build_lldp_frame's frames read back.
#include "agent/lldp/lldp_frame.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tusk::lldp {
namespace {

using ::testing::HasSubstr;

// lldpd 1.0.16 on a veth (configure system hostname spine-b, lldp portidsubtype ifname, ports
// lldpb0 lldp portdescription "Uplink to leaf-a"), as a raw socket on its peer received it:
// Chassis ID (MAC), Port ID (ifname), TTL 120, System Name, System Description, Capabilities,
// Management Address (IPv4, then IPv6 link-local), Port Description, 802.3 and LLDP-MED TLVs, End.
const std::vector<std::uint8_t> kLldpdFrameIfname = {
    0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, 0x1e, 0xe4, 0x19, 0xea, 0x18, 0x1c, 0x88, 0xcc, 0x02, 0x07, 0x04, 0x1e,
    0xe4, 0x19, 0xea, 0x18, 0x1c, 0x04, 0x07, 0x05, 0x6c, 0x6c, 0x64, 0x70, 0x62, 0x30, 0x06, 0x02, 0x00, 0x78,
    0x0a, 0x07, 0x73, 0x70, 0x69, 0x6e, 0x65, 0x2d, 0x62, 0x0c, 0x13, 0x53, 0x70, 0x69, 0x6e, 0x65, 0x20, 0x42,
    0x20, 0x74, 0x65, 0x73, 0x74, 0x20, 0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x0e, 0x04, 0x00, 0x9c, 0x00, 0x80,
    0x10, 0x0c, 0x05, 0x01, 0x0a, 0x4d, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x10, 0x18, 0x11, 0x02,
    0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1c, 0xe4, 0x19, 0xff, 0xfe, 0xea, 0x18, 0x1c, 0x02, 0x00,
    0x00, 0x00, 0x02, 0x00, 0x08, 0x10, 0x55, 0x70, 0x6c, 0x69, 0x6e, 0x6b, 0x20, 0x74, 0x6f, 0x20, 0x6c, 0x65,
    0x61, 0x66, 0x2d, 0x61, 0xfe, 0x09, 0x00, 0x12, 0x0f, 0x03, 0x01, 0x00, 0x00, 0x00, 0x00, 0xfe, 0x09, 0x00,
    0x12, 0x0f, 0x01, 0x00, 0x80, 0x00, 0x00, 0x36, 0x00, 0x00};
// The same lldpd with its defaults: Port ID as the port's MAC, Port Description its name.
const std::vector<std::uint8_t> kLldpdFrameMac = {
    0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, 0xf6, 0x15, 0x58, 0xee, 0xa9, 0x64, 0x88, 0xcc, 0x02, 0x07, 0x04, 0xf6, 0x15,
    0x58, 0xee, 0xa9, 0x64, 0x04, 0x07, 0x03, 0xf6, 0x15, 0x58, 0xee, 0xa9, 0x64, 0x06, 0x02, 0x00, 0x78, 0x0a, 0x07,
    0x73, 0x70, 0x69, 0x6e, 0x65, 0x2d, 0x63, 0x0c, 0x55, 0x44, 0x65, 0x62, 0x69, 0x61, 0x6e, 0x20, 0x47, 0x4e, 0x55,
    0x2f, 0x4c, 0x69, 0x6e, 0x75, 0x78, 0x20, 0x31, 0x32, 0x20, 0x28, 0x62, 0x6f, 0x6f, 0x6b, 0x77, 0x6f, 0x72, 0x6d,
    0x29, 0x20, 0x4c, 0x69, 0x6e, 0x75, 0x78, 0x20, 0x36, 0x2e, 0x31, 0x38, 0x2e, 0x34, 0x34, 0x2d, 0x66, 0x63, 0x2d,
    0x76, 0x36, 0x36, 0x39, 0x20, 0x23, 0x31, 0x20, 0x53, 0x4d, 0x50, 0x20, 0x50, 0x52, 0x45, 0x45, 0x4d, 0x50, 0x54,
    0x5f, 0x44, 0x59, 0x4e, 0x41, 0x4d, 0x49, 0x43, 0x20, 0x40, 0x30, 0x20, 0x78, 0x38, 0x36, 0x5f, 0x36, 0x34, 0x0e,
    0x04, 0x00, 0x9c, 0x00, 0x80, 0x10, 0x0c, 0x05, 0x01, 0x0a, 0x4d, 0x01, 0x02, 0x02, 0x00, 0x00, 0x00, 0x02, 0x00,
    0x08, 0x06, 0x6c, 0x6c, 0x64, 0x70, 0x63, 0x30, 0xfe, 0x09, 0x00, 0x12, 0x0f, 0x03, 0x01, 0x00, 0x00, 0x00, 0x00,
    0xfe, 0x09, 0x00, 0x12, 0x0f, 0x01, 0x00, 0x80, 0x00, 0x00, 0x36, 0x00, 0x00};

constexpr std::array<std::uint8_t, 6> kSource{0x02, 0x74, 0x6b, 0x00, 0x00, 0x01};

LldpFrameParse parse(const std::vector<std::uint8_t>& frame) {
  return parse_lldp_frame(frame.data(), frame.size());
}

void append_tlv(std::vector<std::uint8_t>& frame, unsigned type, const std::vector<std::uint8_t>& value,
                std::size_t claimed_length) {
  frame.push_back(static_cast<std::uint8_t>((type << 1) | (claimed_length >> 8)));
  frame.push_back(static_cast<std::uint8_t>(claimed_length));
  frame.insert(frame.end(), value.begin(), value.end());
}

std::vector<std::uint8_t> bytes_of(const std::string& text) {
  return {text.begin(), text.end()};
}

// A frame written TLV by TLV, right or wrong as a test needs it.
class FrameWriter {
 public:
  FrameWriter() {
    frame_ = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E};
    frame_.insert(frame_.end(), kSource.begin(), kSource.end());
    frame_.insert(frame_.end(), {0x88, 0xCC});
  }
  FrameWriter& tlv(unsigned type, const std::vector<std::uint8_t>& value) {
    append_tlv(frame_, type, value, value.size());
    return *this;
  }
  FrameWriter& text(unsigned type, const std::string& value) { return tlv(type, bytes_of(value)); }
  FrameWriter& id(unsigned type, std::uint8_t subtype, std::vector<std::uint8_t> value) {
    value.insert(value.begin(), subtype);
    return tlv(type, value);
  }
  FrameWriter& ttl(std::uint16_t seconds) {
    return tlv(3, {static_cast<std::uint8_t>(seconds >> 8), static_cast<std::uint8_t>(seconds)});
  }
  // Chassis ID "chassis-1" (local), Port ID "Ethernet7" (ifname), TTL 120.
  FrameWriter& mandatory() { return id(1, 7, bytes_of("chassis-1")).id(2, 5, bytes_of("Ethernet7")).ttl(120); }
  FrameWriter& end() { return tlv(0, {}); }
  std::vector<std::uint8_t> frame() const { return frame_; }

 private:
  std::vector<std::uint8_t> frame_;
};

std::vector<std::uint8_t> management_address(const std::vector<std::uint8_t>& family_and_address) {
  // Element by element: GCC 12 at -O2 misreads inserting a range into a one-byte vector as an
  // out-of-bounds copy (-Warray-bounds).
  std::vector<std::uint8_t> value;
  value.reserve(family_and_address.size() + 7);
  value.push_back(static_cast<std::uint8_t>(family_and_address.size()));
  for (const std::uint8_t byte : family_and_address) value.push_back(byte);
  for (const std::uint8_t byte : {2, 0, 0, 0, 9, 0}) value.push_back(byte);  // ifIndex 9, no OID
  return value;
}

TEST(LldpFrame, ReadsAFrameAsLldpdSendsItWithAnIfnamePortId) {
  ASSERT_TRUE(is_lldp_frame(kLldpdFrameIfname.data(), kLldpdFrameIfname.size()));
  const LldpFrameParse parsed = parse(kLldpdFrameIfname);
  ASSERT_TRUE(parsed.neighbour) << parsed.reason;
  const LldpNeighbour& n = *parsed.neighbour;
  EXPECT_EQ(n.chassis_id, "1e:e4:19:ea:18:1c");
  EXPECT_EQ(n.chassis_id_subtype, 4);
  EXPECT_EQ(n.port_id, "lldpb0");
  EXPECT_EQ(n.port_id_subtype, 5);
  EXPECT_EQ(n.ttl_s, 120u);
  EXPECT_EQ(n.system_name, "spine-b");
  EXPECT_EQ(n.port_description, "Uplink to leaf-a");
  EXPECT_EQ(n.management_address, "10.77.0.2");
  EXPECT_TRUE(parsed.end_tlv_seen);
  EXPECT_EQ(parsed.vlan_id, 0);
  EXPECT_TRUE(parsed.reason.empty());
}

TEST(LldpFrame, ReadsAFrameAsLldpdSendsItWithAMacPortId) {
  const LldpFrameParse parsed = parse(kLldpdFrameMac);
  ASSERT_TRUE(parsed.neighbour) << parsed.reason;
  EXPECT_EQ(parsed.neighbour->chassis_id, "f6:15:58:ee:a9:64");
  EXPECT_EQ(parsed.neighbour->port_id, "f6:15:58:ee:a9:64");
  EXPECT_EQ(parsed.neighbour->port_id_subtype, 3);
  EXPECT_EQ(parsed.neighbour->port_description, "lldpc0");
  EXPECT_EQ(parsed.neighbour->system_name, "spine-c");
  EXPECT_EQ(parsed.neighbour->management_address, "10.77.1.2");
}

TEST(LldpFrame, ReadsLocallyAssignedIdsAndNoOptionalTlvs) {
  const LldpFrameParse parsed =
      parse(FrameWriter().id(1, 7, bytes_of("SN-0042")).id(2, 7, bytes_of("17")).ttl(90).end().frame());
  ASSERT_TRUE(parsed.neighbour) << parsed.reason;
  LldpNeighbour expected;
  expected.chassis_id = "SN-0042";
  expected.chassis_id_subtype = 7;
  expected.port_id = "17";
  expected.port_id_subtype = 7;
  expected.ttl_s = 90;
  EXPECT_EQ(*parsed.neighbour, expected);
}

TEST(LldpFrame, ReadsNetworkAddressIdsAndPrefersAnIpv4ManagementAddress) {
  std::vector<std::uint8_t> ipv6{2, 0x20, 0x01, 0x0d, 0xb8};
  ipv6.resize(17, 0);
  ipv6.back() = 1;  // 2001:db8::1
  const LldpFrameParse parsed = parse(FrameWriter()
                                          .id(1, 5, {1, 192, 0, 2, 1})
                                          .id(2, 4, ipv6)
                                          .ttl(120)
                                          .tlv(8, management_address(ipv6))
                                          .tlv(8, management_address({1, 192, 0, 2, 7}))
                                          .tlv(8, management_address({1, 192, 0, 2, 8}))
                                          .end()
                                          .frame());
  ASSERT_TRUE(parsed.neighbour) << parsed.reason;
  EXPECT_EQ(parsed.neighbour->chassis_id, "192.0.2.1");
  EXPECT_EQ(parsed.neighbour->port_id, "2001:db8::1");
  EXPECT_EQ(parsed.neighbour->management_address, "192.0.2.7");

  const LldpFrameParse v6_only = parse(FrameWriter().mandatory().tlv(8, management_address(ipv6)).end().frame());
  ASSERT_TRUE(v6_only.neighbour) << v6_only.reason;
  EXPECT_EQ(v6_only.neighbour->management_address, "2001:db8::1");
}

TEST(LldpFrame, ReadsTheOtherTextSubtypesAsText) {
  for (const std::uint8_t chassis_subtype : {1, 2, 3, 6}) {
    for (const std::uint8_t port_subtype : {1, 2, 5, 6}) {
      const LldpFrameParse parsed = parse(FrameWriter()
                                              .id(1, chassis_subtype, bytes_of("chassis"))
                                              .id(2, port_subtype, bytes_of("port"))
                                              .ttl(1)
                                              .frame());
      ASSERT_TRUE(parsed.neighbour) << parsed.reason;
      EXPECT_EQ(parsed.neighbour->chassis_id, "chassis");
      EXPECT_EQ(parsed.neighbour->port_id, "port");
      EXPECT_EQ(parsed.neighbour->chassis_id_subtype, chassis_subtype);
      EXPECT_EQ(parsed.neighbour->port_id_subtype, port_subtype);
    }
  }
}

TEST(LldpFrame, ReadsAFrameWithOneVlanTag) {
  for (const std::uint16_t tpid : {0x8100, 0x88A8}) {
    std::vector<std::uint8_t> tagged = kLldpdFrameIfname;
    tagged.insert(tagged.begin() + 12,
                  {static_cast<std::uint8_t>(tpid >> 8), static_cast<std::uint8_t>(tpid), 0xA0, 0x64});
    ASSERT_TRUE(is_lldp_frame(tagged.data(), tagged.size()));
    const LldpFrameParse parsed = parse(tagged);
    ASSERT_TRUE(parsed.neighbour) << parsed.reason;
    EXPECT_EQ(*parsed.neighbour, *parse(kLldpdFrameIfname).neighbour);
    EXPECT_EQ(parsed.vlan_id, 100);
  }
}

TEST(LldpFrame, TellsOtherFramesApartByTheirEtherType) {
  std::vector<std::uint8_t> ipv4 = kLldpdFrameIfname;
  ipv4[12] = 0x08, ipv4[13] = 0x00;
  EXPECT_FALSE(is_lldp_frame(ipv4.data(), ipv4.size()));
  EXPECT_EQ(parse(ipv4).error, LldpFrameError::NotLldp);
  EXPECT_THAT(parse(ipv4).reason, HasSubstr("0x0800"));
  std::vector<std::uint8_t> tagged_ipv4 = ipv4;
  tagged_ipv4.insert(tagged_ipv4.begin() + 12, {0x81, 0x00, 0x00, 0x05});
  EXPECT_FALSE(is_lldp_frame(tagged_ipv4.data(), tagged_ipv4.size()));
  // Two tags: LLDP is link-local, and a frame with two tags is no neighbour of this port.
  std::vector<std::uint8_t> double_tagged = kLldpdFrameIfname;
  double_tagged.insert(double_tagged.begin() + 12, {0x88, 0xA8, 0x00, 0x05, 0x81, 0x00, 0x00, 0x06});
  EXPECT_FALSE(is_lldp_frame(double_tagged.data(), double_tagged.size()));
  for (std::size_t length = 0; length < 14; ++length) {
    const std::vector<std::uint8_t> runt(kLldpdFrameIfname.begin(), kLldpdFrameIfname.begin() + length);
    EXPECT_FALSE(is_lldp_frame(runt.data(), runt.size()));
    EXPECT_EQ(parse(runt).error, LldpFrameError::NotLldp);
  }
  const std::vector<std::uint8_t> tag_only{0x01, 0x80, 0xC2, 0,    0,    0x0E, 2,    0,   0,
                                           0,    0,    1,    0x81, 0x00, 0x00, 0x05, 0x88};
  EXPECT_FALSE(is_lldp_frame(tag_only.data(), tag_only.size()));
  EXPECT_FALSE(is_lldp_frame(nullptr, 0));
}

// Each prefix in a buffer of exactly its size, so AddressSanitizer (the fuzz tree) or the
// vector's end catches a read past it. A prefix ends either inside a TLV (rejected) or right
// after one (accepted without End once the first three are whole).
TEST(LldpFrame, EveryPrefixOfAGoodFrameIsReadOrRejectedWithAReason) {
  for (const auto* good : {&kLldpdFrameIfname, &kLldpdFrameMac}) {
    std::size_t accepted = 0;
    for (std::size_t length = 0; length <= good->size(); ++length) {
      const std::vector<std::uint8_t> prefix(good->begin(), good->begin() + static_cast<std::ptrdiff_t>(length));
      const LldpFrameParse parsed = parse(prefix);
      if (parsed.neighbour) {
        ++accepted;
        EXPECT_EQ(parsed.error, LldpFrameError::None);
        EXPECT_EQ(parsed.neighbour->chassis_id, parse(*good).neighbour->chassis_id);
        EXPECT_EQ(parsed.end_tlv_seen, length == good->size()) << length;
      } else {
        EXPECT_NE(parsed.error, LldpFrameError::None) << length;
        EXPECT_FALSE(parsed.reason.empty()) << length;
      }
    }
    EXPECT_GE(accepted, 5u);  // after TTL, each optional TLV, and End
  }
}

TEST(LldpFrame, RejectsMandatoryTlvsOutOfOrder) {
  const auto chassis = bytes_of(
      "\x07"
      "c");
  const auto port = bytes_of("\x05p");
  EXPECT_EQ(parse(FrameWriter().tlv(2, port).tlv(1, chassis).ttl(5).end().frame()).error,
            LldpFrameError::MissingChassisId);
  EXPECT_EQ(parse(FrameWriter().tlv(1, chassis).ttl(5).tlv(2, port).end().frame()).error,
            LldpFrameError::MissingPortId);
  const LldpFrameParse no_ttl = parse(FrameWriter().tlv(1, chassis).tlv(2, port).text(5, "sw").ttl(5).end().frame());
  EXPECT_EQ(no_ttl.error, LldpFrameError::MissingTtl);
  EXPECT_THAT(no_ttl.reason, HasSubstr("byte 22: TLV 3 is System Name, where 802.1AB requires TTL"));
  EXPECT_EQ(parse(FrameWriter().tlv(1, chassis).tlv(2, port).end().frame()).error, LldpFrameError::MissingTtl);
  const LldpFrameParse ends = parse(FrameWriter().tlv(1, chassis).frame());
  EXPECT_EQ(ends.error, LldpFrameError::MissingPortId);
  EXPECT_THAT(ends.reason, HasSubstr("byte 18: the frame ends where 802.1AB requires Port ID"));
  EXPECT_EQ(parse(FrameWriter().frame()).error, LldpFrameError::MissingChassisId);
}

TEST(LldpFrame, RejectsATlvWhoseLengthRunsPastTheFrame) {
  std::vector<std::uint8_t> frame = FrameWriter().mandatory().frame();
  append_tlv(frame, 5, bytes_of("spine"), 6);
  const LldpFrameParse parsed = parse(frame);
  EXPECT_EQ(parsed.error, LldpFrameError::TruncatedTlv);
  EXPECT_THAT(parsed.reason, HasSubstr("System Name TLV's 6 bytes run past the frame's end (5 bytes left)"));
  std::vector<std::uint8_t> half_header = FrameWriter().mandatory().frame();
  half_header.push_back(0x0A);
  EXPECT_EQ(parse(half_header).error, LldpFrameError::TruncatedTlv);
  std::vector<std::uint8_t> long_chassis = FrameWriter().frame();
  append_tlv(long_chassis, 1, {7, 'c'}, 511);
  EXPECT_EQ(parse(long_chassis).error, LldpFrameError::TruncatedTlv);
}

TEST(LldpFrame, RejectsDuplicateTlvsThatMustBeUnique) {
  for (const unsigned type : {1u, 2u, 3u}) {
    const LldpFrameParse parsed = parse(FrameWriter().mandatory().tlv(type, {7, 'x'}).end().frame());
    EXPECT_EQ(parsed.error, LldpFrameError::DuplicateMandatory) << type;
  }
  EXPECT_EQ(parse(FrameWriter().mandatory().text(5, "a").text(5, "b").end().frame()).error,
            LldpFrameError::DuplicateOptional);
  EXPECT_EQ(parse(FrameWriter().mandatory().text(4, "a").text(4, "b").end().frame()).error,
            LldpFrameError::DuplicateOptional);
}

TEST(LldpFrame, RejectsMalformedMandatoryTlvs) {
  EXPECT_EQ(parse(FrameWriter().tlv(1, {4}).id(2, 5, {'p'}).ttl(1).frame()).error, LldpFrameError::BadChassisId);
  EXPECT_EQ(parse(FrameWriter().id(1, 0, {'c'}).id(2, 5, {'p'}).ttl(1).frame()).error, LldpFrameError::BadChassisId);
  EXPECT_EQ(parse(FrameWriter().id(1, 8, {'c'}).id(2, 5, {'p'}).ttl(1).frame()).error, LldpFrameError::BadChassisId);
  EXPECT_EQ(parse(FrameWriter().id(1, 7, {'c'}).tlv(2, {}).ttl(1).frame()).error, LldpFrameError::BadPortId);
  EXPECT_EQ(parse(FrameWriter().id(1, 7, {'c'}).id(2, 5, std::vector<std::uint8_t>(256, 'p')).ttl(1).frame()).error,
            LldpFrameError::BadPortId);
  EXPECT_EQ(parse(FrameWriter().id(1, 7, {'c'}).id(2, 5, {'p'}).tlv(3, {0, 0, 1}).frame()).error,
            LldpFrameError::BadTtl);
  EXPECT_EQ(parse(FrameWriter().mandatory().tlv(0, {0}).frame()).error, LldpFrameError::BadEnd);
  // 255 bytes after the subtype is the most a Chassis ID holds.
  EXPECT_TRUE(
      parse(FrameWriter().id(1, 7, std::vector<std::uint8_t>(255, 'c')).id(2, 5, {'p'}).ttl(1).frame()).neighbour);
}

TEST(LldpFrame, RejectsAManagementAddressThatDoesNotFitItsTlv) {
  EXPECT_EQ(parse(FrameWriter().mandatory().tlv(8, {5, 1, 10, 0, 0, 1}).frame()).error,
            LldpFrameError::BadManagementAddress);  // no interface number
  std::vector<std::uint8_t> too_long{33, 1};
  too_long.resize(40, 0);
  EXPECT_EQ(parse(FrameWriter().mandatory().tlv(8, too_long).frame()).error, LldpFrameError::BadManagementAddress);
  EXPECT_EQ(parse(FrameWriter().mandatory().tlv(8, {}).frame()).error, LldpFrameError::BadManagementAddress);
  // A family it has no text for is kept as hex.
  const LldpFrameParse other = parse(FrameWriter().mandatory().tlv(8, management_address({16, 0xAB, 0xCD})).frame());
  ASSERT_TRUE(other.neighbour) << other.reason;
  EXPECT_EQ(other.neighbour->management_address, "10:ab:cd");
}

// Chosen: a frame that ends right after a whole TLV is accepted without End (end_tlv_seen false).
// The frame's length bounds the LLDPDU either way and every TLV in it is whole; lldpd insists on
// End, but a link tester that reports its neighbour gains nothing by dropping one that left it out.
TEST(LldpFrame, AcceptsAFrameWithoutEndAndIgnoresPaddingAfterEnd) {
  const LldpFrameParse no_end = parse(FrameWriter().mandatory().text(5, "spine-1").frame());
  ASSERT_TRUE(no_end.neighbour) << no_end.reason;
  EXPECT_FALSE(no_end.end_tlv_seen);
  EXPECT_EQ(no_end.neighbour->system_name, "spine-1");

  std::vector<std::uint8_t> padded = FrameWriter().mandatory().end().frame();
  padded.insert(padded.end(), {0xFF, 0xFF, 0x12});
  const LldpFrameParse after_end = parse(padded);
  ASSERT_TRUE(after_end.neighbour) << after_end.reason;
  EXPECT_TRUE(after_end.end_tlv_seen);
}

TEST(LldpFrame, SkipsTlvsItHasNoFieldFor) {
  const LldpFrameParse parsed = parse(FrameWriter()
                                          .mandatory()
                                          .text(6, "Switch OS 1.2")
                                          .tlv(7, {0, 0x14, 0, 0x14})
                                          .tlv(127, {0x00, 0x12, 0x0F, 0x04, 0x23, 0x28})
                                          .tlv(42, {1, 2, 3})
                                          .text(5, "leaf-9")
                                          .end()
                                          .frame());
  ASSERT_TRUE(parsed.neighbour) << parsed.reason;
  EXPECT_EQ(parsed.neighbour->system_name, "leaf-9");
}

TEST(LldpFrame, KeepsTextsPrintableAndWithin255Bytes) {
  const LldpFrameParse parsed = parse(
      FrameWriter().mandatory().text(5, "sw\x01itch\xff\xc3\xa9\x1b[31m").text(4, std::string(300, 'd')).end().frame());
  ASSERT_TRUE(parsed.neighbour) << parsed.reason;
  EXPECT_EQ(parsed.neighbour->system_name, "sw\\x01itch\\xff\xc3\xa9\\x1b[31m");
  EXPECT_EQ(parsed.neighbour->port_description, std::string(255, 'd'));

  // 255 control bytes escape to 1020: cut after the 63rd whole escape, not inside the 64th.
  const LldpFrameParse escaped = parse(FrameWriter().mandatory().text(5, std::string(255, '\x02')).end().frame());
  ASSERT_TRUE(escaped.neighbour) << escaped.reason;
  std::string expected;
  for (int i = 0; i < 63; ++i) expected += "\\x02";
  EXPECT_EQ(escaped.neighbour->system_name, expected);

  // A "MAC address" of 255 bytes: the first 85 as "aa:" pairs, 254 characters.
  const LldpFrameParse long_mac =
      parse(FrameWriter().id(1, 4, std::vector<std::uint8_t>(255, 0xAB)).id(2, 5, {'p'}).ttl(1).frame());
  ASSERT_TRUE(long_mac.neighbour) << long_mac.reason;
  EXPECT_EQ(long_mac.neighbour->chassis_id.size(), 254u);
  EXPECT_EQ(long_mac.neighbour->chassis_id.substr(0, 6), "ab:ab:");
}

TEST(LldpFrame, NamesEveryError) {
  for (int e = static_cast<int>(LldpFrameError::None); e <= static_cast<int>(LldpFrameError::BadManagementAddress);
       ++e) {
    EXPECT_NE(to_string(static_cast<LldpFrameError>(e)), "unknown") << e;
  }
}

LldpNeighbour announced() {
  LldpNeighbour self;
  self.chassis_id = "02:74:6b:00:00:01";
  self.chassis_id_subtype = 4;
  self.port_id = "0000:3b:00.0";
  self.port_id_subtype = 5;
  self.port_description = "tusk-agent DPDK port";
  self.system_name = "gpu-node-17";
  self.management_address = "192.0.2.17";
  self.ttl_s = 120;
  return self;
}

TEST(LldpFrame, BuildsAFrameThatReadsBackAsWhatItAnnounced) {
  const std::vector<std::uint8_t> frame = build_lldp_frame(announced(), kSource);
  EXPECT_EQ(std::vector<std::uint8_t>(frame.begin(), frame.begin() + 6),
            std::vector<std::uint8_t>(kNearestBridgeMac.begin(), kNearestBridgeMac.end()));
  EXPECT_EQ(std::vector<std::uint8_t>(frame.begin() + 6, frame.begin() + 12),
            std::vector<std::uint8_t>(kSource.begin(), kSource.end()));
  const LldpFrameParse parsed = parse(frame);
  ASSERT_TRUE(parsed.neighbour) << parsed.reason;
  EXPECT_EQ(*parsed.neighbour, announced());
  EXPECT_TRUE(parsed.end_tlv_seen);
}

TEST(LldpFrame, RoundTripsEverySubtypeAndAddressFamily) {
  std::vector<LldpNeighbour> cases;
  for (std::uint8_t chassis = 1; chassis <= 7; ++chassis) {
    LldpNeighbour n = announced();
    n.chassis_id_subtype = chassis;
    n.chassis_id = chassis == 4 ? "aa:bb:cc:dd:ee:ff" : chassis == 5 ? "2001:db8::17" : "chassis text";
    n.port_id_subtype = static_cast<std::uint8_t>(8 - chassis);
    n.port_id = n.port_id_subtype == 3 ? "00:11:22:33:44:55" : n.port_id_subtype == 4 ? "198.51.100.3" : "port text";
    cases.push_back(n);
  }
  LldpNeighbour minimal;
  minimal.chassis_id = "c";
  minimal.chassis_id_subtype = 7;
  minimal.port_id = "p";
  minimal.port_id_subtype = 7;
  cases.push_back(minimal);
  LldpNeighbour mac_management = announced();
  mac_management.management_address = "02:74:6b:00:00:01";
  cases.push_back(mac_management);
  LldpNeighbour long_texts = announced();
  long_texts.system_name = std::string(255, 'n');
  long_texts.port_description = std::string(255, 'd');
  long_texts.port_id = std::string(255, 'p');
  long_texts.management_address = "fe80::1";
  long_texts.ttl_s = 65535;
  cases.push_back(long_texts);
  for (const LldpNeighbour& n : cases) {
    const std::vector<std::uint8_t> frame = build_lldp_frame(n, kSource);
    EXPECT_GE(frame.size(), kMinEthernetFrameBytes);
    const LldpFrameParse parsed = parse(frame);
    ASSERT_TRUE(parsed.neighbour) << parsed.reason;
    EXPECT_EQ(*parsed.neighbour, n) << n.chassis_id << " / " << n.port_id;
  }
}

TEST(LldpFrame, RefusesToBuildWhatATlvCannotCarry) {
  const auto refused = [](LldpNeighbour n, const char* field) {
    try {
      build_lldp_frame(n, kSource);
      ADD_FAILURE() << "built a frame for a bad " << field;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(field));
    }
  };
  LldpNeighbour n = announced();
  n.chassis_id_subtype = 0;
  refused(n, "chassis_id_subtype 0");
  n = announced();
  n.port_id_subtype = 8;
  refused(n, "port_id_subtype 8");
  n = announced();
  n.chassis_id = "02:74:6b:00:00:0g";
  refused(n, "chassis_id");
  n = announced();
  n.chassis_id = "02:74:6b:00:00:";
  refused(n, "chassis_id");
  n = announced();
  n.port_id = "";
  refused(n, "port_id");
  n = announced();
  n.port_id = std::string(256, 'p');
  refused(n, "port_id");
  n = announced();
  n.system_name = std::string(256, 'n');
  refused(n, "system_name: 256 bytes");
  n = announced();
  n.management_address = "spine-1.example";
  refused(n, "management_address");
  // What the parser writes for 8 bytes of an unknown family: IPv6 syntax, but not as inet_ntop
  // writes it, so a parse of the built frame would not give it back.
  n.management_address = "00:fe:80:00:00:00:00:00";
  refused(n, "management_address");
  n = announced();
  n.ttl_s = 65536;
  refused(n, "ttl_s 65536");
}

}  // namespace
}  // namespace tusk::lldp
