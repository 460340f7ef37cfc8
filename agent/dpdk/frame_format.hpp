// The on-the-wire layout of a DPDK test frame: Ethernet header, optional 802.1Q tag, EtherType,
// then either the Tusk header directly (encapsulation "ethernet", one L2 segment) or IPv4 and UDP
// headers first (encapsulation "ipv4_udp", which routers forward and ECMP hashes by UDP port), then
// the CRC-protected Tusk header, then the PRBS payload (written separately by the PRBS generator).
//
// Layout, all multi-byte fields big-endian:
//
//   offset  size  field
//        0     6  destination MAC
//        6     6  source MAC
//       12     4  802.1Q tag (TPID 0x8100, PCP:3 DEI:1 VID:12), only when tagged
//   12/16      2  EtherType (0x88B5 by default, IEEE local experimental; 0x0800 for ipv4_udp)
//   14/18     28  ipv4_udp only: IPv4 header (20 bytes, no options: DSCP/ECN, DF set, TTL,
//                 protocol 17, header checksum), then UDP header (8 bytes, checksum 0: a flipped
//                 payload bit must reach the BERT, not be dropped by a checksum on the way)
//    14..46   34  Tusk header:
//                   +0  u32 magic 0x54534B31 ("TSK1")
//                   +4  u8  version (1)
//                   +5  u8  flags (bit 0: payload inverted)
//                   +6  u16 stream id
//                   +8  u64 sequence number
//                  +16  u64 TX timestamp, ns
//                  +24  u32 PRBS state at the first payload bit
//                  +28  u16 payload length, bytes
//                  +30  u32 CRC-32C over bytes +0..+29 (detects every burst up to 32 bits)
//    48..80    n  payload
//
// The CRC covers only the Tusk header, not the MACs, the VLAN tag or the IPv4/UDP headers: switches
// may legitimately rewrite the tag (PCP remarking, VLAN translation), routers rewrite MACs, TTL and
// ECN, and the Ethernet FCS and the IPv4 checksum already guard the rest. Its job is to stop a
// corrupted sequence number or stream id from being booked against the wrong stream.
//
// Pure functions on caller-owned buffers; any thread may call them. write_headers and parse_headers
// are datapath calls: they never throw or allocate.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace tusk::dpdk {

inline constexpr std::uint16_t kDefaultEtherType = 0x88B5;
inline constexpr std::uint16_t kVlanTpid = 0x8100;
inline constexpr std::uint32_t kTuskMagic = 0x54534B31;  // "TSK1"
inline constexpr std::uint8_t kTuskVersion = 1;
inline constexpr std::uint8_t kFlagPayloadInverted = 0x01;

inline constexpr std::size_t kEthernetHeaderLength = 14;
inline constexpr std::size_t kVlanTagLength = 4;
inline constexpr std::size_t kTuskHeaderLength = 34;
inline constexpr std::uint16_t kIpv4EtherType = 0x0800;
inline constexpr std::size_t kIpv4HeaderLength = 20;  // written without options
inline constexpr std::size_t kUdpHeaderLength = 8;
// The UDP port test frames go to unless a profile says otherwise: the EtherType's number, so a
// capture filter for one finds the other. Not RoCEv2's 4791: no RDMA NIC should take them.
inline constexpr std::uint16_t kDefaultUdpPort = 0x88B5;
inline constexpr std::uint8_t kMaxDscp = 63;
inline constexpr std::uint8_t kMaxEcn = 3;
inline constexpr std::uint8_t kEcnCe = 3;  // Congestion Experienced: a switch marked the frame (RFC 3168)
// Ethernet's minimum frame is 64 bytes with the 4-byte FCS; frame sizes here never include the FCS.
inline constexpr std::size_t kMinFrameLength = 60;
inline constexpr std::uint16_t kMaxVlanId = 4094;  // 4095 is reserved by 802.1Q
inline constexpr std::uint8_t kMaxPcp = 7;

using MacAddress = std::array<std::uint8_t, 6>;

enum class Encapsulation : std::uint8_t {
  Ethernet,  // the Tusk header right after the EtherType: one L2 segment
  Ipv4Udp,   // inside IPv4 and UDP: crosses routers, spread over ECMP paths by the UDP ports
};

const char* to_string(Encapsulation encapsulation);

// Addresses in host byte order; written big-endian.
struct Ipv4UdpSpec {
  std::uint32_t src_address = 0;
  std::uint32_t dst_address = 0;
  std::uint16_t src_port = kDefaultUdpPort;  // what spreads flows over paths
  std::uint16_t dst_port = kDefaultUdpPort;
  std::uint8_t dscp = 0;  // 0..63
  std::uint8_t ecn = 0;   // 0..3
  std::uint8_t ttl = 64;  // 1..255

  bool operator==(const Ipv4UdpSpec&) const = default;
};

struct FrameSpec {
  MacAddress dst{};  // for ipv4_udp across a router: the gateway's MAC
  MacAddress src{};
  std::uint16_t vlan = 0;  // 0..4094; VLAN 0 with tagged=true is a priority-tagged frame
  std::uint8_t pcp = 0;    // 0..7
  bool tagged = false;
  std::uint16_t ethertype = kDefaultEtherType;  // ethernet only; ipv4_udp frames carry 0x0800
  Encapsulation encapsulation = Encapsulation::Ethernet;
  Ipv4UdpSpec ip;  // ipv4_udp only
};

// What a receiver takes as its test frames: the encapsulation and, within it, the EtherType
// (ethernet) or the UDP destination port (ipv4_udp).
struct FrameMatch {
  Encapsulation encapsulation = Encapsulation::Ethernet;
  std::uint16_t ethertype = kDefaultEtherType;
  std::uint16_t udp_port = kDefaultUdpPort;
};

inline FrameMatch match_for(const FrameSpec& spec) {
  return {spec.encapsulation, spec.ethertype, spec.ip.dst_port};
}

// Magic and CRC are not fields here: the codec writes and checks them.
struct TuskHeader {
  std::uint8_t version = kTuskVersion;
  std::uint8_t flags = 0;
  std::uint16_t stream_id = 0;
  std::uint64_t seq = 0;
  std::uint64_t tx_timestamp_ns = 0;
  std::uint32_t prbs_state = 0;
  std::uint16_t payload_length = 0;

  bool operator==(const TuskHeader&) const = default;
};

struct ParsedFrame {
  TuskHeader header;
  bool tagged = false;
  std::uint16_t vlan = 0;
  std::uint8_t pcp = 0;
  // ipv4_udp frames only: the fields as they arrived (routers decrement the TTL and may remark
  // DSCP or set ECN's congestion mark on the way).
  Ipv4UdpSpec ip;
  std::size_t payload_offset = 0;
  const std::uint8_t* payload = nullptr;  // points into the parsed frame
  std::size_t payload_length = 0;         // header.payload_length, already checked against the frame
  // Set however the header turns out: where the Tusk header starts, and (ipv4_udp) whether the
  // IPv4 and UDP headers passed their checks, so that `ip` holds the sender's addresses.
  std::size_t tusk_offset = 0;
  bool addresses_read = false;
};

enum class ParseStatus {
  Ok,
  NotTusk,    // wrong EtherType, protocol, UDP port or magic: someone else's frame, ignore it
  BadHeader,  // our magic (or within two bits of it), but the CRC, the version or the IPv4
              // checksum is wrong: our frame, damaged on the way
  Truncated,  // too short for the headers it claims, or for the payload length it declares
};

const char* to_string(ParseStatus status);

// What a damaged Tusk header (ParseStatus::BadHeader) still seems to say, unchecked since its CRC
// failed: the stream and sequence number, for the receiver to tell whose frame it was.
struct DamagedHeader {
  std::uint16_t stream_id = 0;
  std::uint64_t seq = 0;
};
// Nothing when the frame is too short to hold the header.
std::optional<DamagedHeader> damaged_header(const std::uint8_t* frame, std::size_t length, const ParsedFrame& parsed);

// Throws std::invalid_argument naming the bad field; call once at set-up, not per frame.
void validate(const FrameSpec& spec);

std::size_t header_length(const FrameSpec& spec);

// Payload bytes that fill a frame of frame_size bytes (without FCS). Throws std::invalid_argument when
// the frame is below the Ethernet minimum, cannot hold the headers, or its payload overflows the u16
// length field.
std::size_t payload_length_for(const FrameSpec& spec, std::size_t frame_size);

// Writes header_length(spec) bytes at frame. spec must have passed validate().
void write_headers(const FrameSpec& spec, const TuskHeader& header, std::uint8_t* frame);

// The 802.1Q tag a frame arrived with: the one in its bytes, or, where the driver stripped it into
// packet metadata (VLAN offload; DPDK: RTE_MBUF_F_RX_VLAN_STRIPPED and mbuf->vlan_tci), that one.
struct ArrivedTag {
  bool tagged = false;
  std::uint16_t vlan = 0;
  std::uint8_t pcp = 0;
};

inline ArrivedTag arrived_tag(const ParsedFrame& parsed, bool stripped, std::uint16_t stripped_tci) noexcept {
  if (stripped)
    return {true, static_cast<std::uint16_t>(stripped_tci & 0x0FFFu), static_cast<std::uint8_t>(stripped_tci >> 13)};
  return {parsed.tagged, parsed.vlan, parsed.pcp};
}

enum class TagCheck {
  AsSent,
  VlanMismatch,  // another VLAN id, a tag where none was sent, or none where one was
  PcpChanged,    // the VLAN sent, another priority: switches may remark, so not an error
};

TagCheck check_tag(const FrameSpec& sent, const ArrivedTag& arrived) noexcept;

// One 802.1Q tag is skipped before the EtherType is compared. Bytes after the declared payload (a
// kept FCS, padding) are allowed and ignored. ipv4_udp: IPv4 options are skipped; fragments and
// other protocols are not ours; an IPv4 header whose checksum fails is BadHeader when the Tusk
// magic is where it would be (our frame, damaged), else NotTusk. A magic within two bits of ours
// is ours, damaged (BadHeader): a flipped bit there must not turn a damaged frame into a lost one.
ParseStatus parse_headers(const std::uint8_t* frame, std::size_t length, ParsedFrame& out, const FrameMatch& match);
inline ParseStatus parse_headers(const std::uint8_t* frame, std::size_t length, ParsedFrame& out,
                                 std::uint16_t ethertype = kDefaultEtherType) {
  return parse_headers(frame, length, out, FrameMatch{Encapsulation::Ethernet, ethertype, kDefaultUdpPort});
}

}  // namespace tusk::dpdk
