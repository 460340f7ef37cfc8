#include "agent/dpdk/frame_format.hpp"

#include <netinet/in.h>

#include <fmt/format.h>

#include <bit>
#include <limits>
#include <stdexcept>

#include "agent/dpdk/wire_bytes.hpp"
#include "common/crc32c.hpp"

namespace tusk::dpdk {
namespace {

// Offsets inside the Tusk header.
constexpr std::size_t kMagicAt = 0;
constexpr std::size_t kVersionAt = 4;
constexpr std::size_t kFlagsAt = 5;
constexpr std::size_t kStreamIdAt = 6;
constexpr std::size_t kSeqAt = 8;
constexpr std::size_t kTimestampAt = 16;
constexpr std::size_t kPrbsStateAt = 24;
constexpr std::size_t kPayloadLengthAt = 28;
constexpr std::size_t kCrcAt = 30;
static_assert(kCrcAt + 4 == kTuskHeaderLength);

using wire::get16;
using wire::get32;
using wire::get64;
using wire::put16;
using wire::put32;
using wire::put64;

using wire::internet_checksum;

// IPv4 header fields (RFC 791).
constexpr std::size_t kIpTosAt = 1;
constexpr std::size_t kIpTotalLengthAt = 2;
constexpr std::size_t kIpFlagsFragmentAt = 6;
constexpr std::size_t kIpTtlAt = 8;
constexpr std::size_t kIpProtocolAt = 9;
constexpr std::size_t kIpChecksumAt = 10;
constexpr std::size_t kIpSrcAt = 12;
constexpr std::size_t kIpDstAt = 16;
constexpr std::uint16_t kDontFragment = 0x4000;

bool is_vlan_tpid(std::uint16_t ethertype) {
  // 802.1ad and the pre-standard QinQ TPID too: using one as the test EtherType would confuse every
  // switch on the path.
  return ethertype == kVlanTpid || ethertype == 0x88A8 || ethertype == 0x9100;
}

}  // namespace

const char* to_string(ParseStatus status) {
  switch (status) {
    case ParseStatus::Ok:
      return "ok";
    case ParseStatus::NotTusk:
      return "not a Tusk frame";
    case ParseStatus::BadHeader:
      return "bad Tusk header";
    case ParseStatus::Truncated:
      return "truncated";
  }
  return "unknown";
}

const char* to_string(Encapsulation encapsulation) {
  switch (encapsulation) {
    case Encapsulation::Ethernet:
      return "ethernet";
    case Encapsulation::Ipv4Udp:
      return "ipv4_udp";
  }
  return "unknown";
}

namespace {

void validate_ipv4_udp(const FrameSpec& spec) {
  const Ipv4UdpSpec& ip = spec.ip;
  if (spec.ethertype != kDefaultEtherType) {
    throw std::invalid_argument(fmt::format(
        "frame spec: EtherType 0x{:04X} given for ipv4_udp frames, which always carry 0x0800", spec.ethertype));
  }
  if (ip.src_address == 0) throw std::invalid_argument("frame spec: ipv4_udp frames need a source IPv4 address");
  if (ip.dst_address == 0) throw std::invalid_argument("frame spec: ipv4_udp frames need a destination IPv4 address");
  if (ip.src_port == 0 || ip.dst_port == 0) {
    throw std::invalid_argument(
        fmt::format("frame spec: UDP port 0 (source {}, destination {}) is not a port", ip.src_port, ip.dst_port));
  }
  if (ip.dscp > kMaxDscp)
    throw std::invalid_argument(fmt::format("frame spec: DSCP {} is out of range 0..{}", ip.dscp, kMaxDscp));
  if (ip.ecn > kMaxEcn)
    throw std::invalid_argument(fmt::format("frame spec: ECN {} is out of range 0..{}", ip.ecn, kMaxEcn));
  if (ip.ttl == 0) throw std::invalid_argument("frame spec: TTL 0 would be dropped by the first router");
}

}  // namespace

void validate(const FrameSpec& spec) {
  if (spec.tagged && spec.vlan > kMaxVlanId) {
    throw std::invalid_argument(fmt::format("frame spec: VLAN id {} is out of range 0..{}", spec.vlan, kMaxVlanId));
  }
  if (spec.tagged && spec.pcp > kMaxPcp) {
    throw std::invalid_argument(fmt::format("frame spec: PCP {} is out of range 0..{}", spec.pcp, kMaxPcp));
  }
  if (!spec.tagged && (spec.vlan != 0 || spec.pcp != 0)) {
    // Silently dropping a configured VLAN would send the test down the wrong path.
    throw std::invalid_argument(
        fmt::format("frame spec: VLAN {} / PCP {} given for an untagged frame", spec.vlan, spec.pcp));
  }
  if (spec.ethertype < 0x0600) {
    throw std::invalid_argument(
        fmt::format("frame spec: EtherType 0x{:04X} is below 0x0600, which 802.3 reads as a length", spec.ethertype));
  }
  if (is_vlan_tpid(spec.ethertype)) {
    throw std::invalid_argument(fmt::format("frame spec: EtherType 0x{:04X} is a VLAN tag type", spec.ethertype));
  }
  if (spec.encapsulation == Encapsulation::Ipv4Udp) validate_ipv4_udp(spec);
}

std::size_t header_length(const FrameSpec& spec) {
  const std::size_t routed = spec.encapsulation == Encapsulation::Ipv4Udp ? kIpv4HeaderLength + kUdpHeaderLength : 0;
  return kEthernetHeaderLength + (spec.tagged ? kVlanTagLength : 0) + routed + kTuskHeaderLength;
}

std::size_t payload_length_for(const FrameSpec& spec, std::size_t frame_size) {
  validate(spec);
  const std::size_t headers = header_length(spec);
  if (frame_size < kMinFrameLength) {
    throw std::invalid_argument(fmt::format("frame size {} B is below the Ethernet minimum of {} B (64 B with FCS)",
                                            frame_size, kMinFrameLength));
  }
  if (frame_size < headers) {
    throw std::invalid_argument(fmt::format("frame size {} B cannot hold the {} B of headers{}{}", frame_size, headers,
                                            spec.tagged ? " (VLAN-tagged)" : "",
                                            spec.encapsulation == Encapsulation::Ipv4Udp ? " (IPv4/UDP)" : ""));
  }
  const std::size_t payload = frame_size - headers;
  if (payload > std::numeric_limits<std::uint16_t>::max()) {
    throw std::invalid_argument(
        fmt::format("frame size {} B gives a {} B payload, more than the {} B the header can carry", frame_size,
                    payload, std::numeric_limits<std::uint16_t>::max()));
  }
  return payload;
}

void write_headers(const FrameSpec& spec, const TuskHeader& header, std::uint8_t* frame) {
  std::uint8_t* p = frame;
  for (std::size_t i = 0; i < 6; ++i) p[i] = spec.dst[i];
  for (std::size_t i = 0; i < 6; ++i) p[6 + i] = spec.src[i];
  p += 12;
  if (spec.tagged) {
    put16(p, kVlanTpid);
    put16(p + 2, static_cast<std::uint16_t>((spec.pcp << 13) | spec.vlan));  // DEI stays 0
    p += kVlanTagLength;
  }
  if (spec.encapsulation == Encapsulation::Ipv4Udp) {
    put16(p, kIpv4EtherType);
    p += 2;
    const std::size_t udp_length = kUdpHeaderLength + kTuskHeaderLength + header.payload_length;
    p[0] = 0x45;  // version 4, 5 words: no options
    p[kIpTosAt] = static_cast<std::uint8_t>((spec.ip.dscp << 2) | spec.ip.ecn);
    put16(p + kIpTotalLengthAt, static_cast<std::uint16_t>(kIpv4HeaderLength + udp_length));
    put16(p + 4, 0);  // identification: unused, nothing is ever fragmented
    put16(p + kIpFlagsFragmentAt, kDontFragment);
    p[kIpTtlAt] = spec.ip.ttl;
    p[kIpProtocolAt] = IPPROTO_UDP;
    put16(p + kIpChecksumAt, 0);
    put32(p + kIpSrcAt, spec.ip.src_address);
    put32(p + kIpDstAt, spec.ip.dst_address);
    put16(p + kIpChecksumAt, internet_checksum(p, kIpv4HeaderLength));
    p += kIpv4HeaderLength;
    put16(p, spec.ip.src_port);
    put16(p + 2, spec.ip.dst_port);
    put16(p + 4, static_cast<std::uint16_t>(udp_length));
    put16(p + 6, 0);  // no checksum (allowed over IPv4): corruption must reach the BERT
    p += kUdpHeaderLength;
  } else {
    put16(p, spec.ethertype);
    p += 2;
  }

  put32(p + kMagicAt, kTuskMagic);
  p[kVersionAt] = header.version;
  p[kFlagsAt] = header.flags;
  put16(p + kStreamIdAt, header.stream_id);
  put64(p + kSeqAt, header.seq);
  put64(p + kTimestampAt, header.tx_timestamp_ns);
  put32(p + kPrbsStateAt, header.prbs_state);
  put16(p + kPayloadLengthAt, header.payload_length);
  put32(p + kCrcAt, crc32c(p, kCrcAt));
}

TagCheck check_tag(const FrameSpec& sent, const ArrivedTag& arrived) noexcept {
  if (arrived.tagged != sent.tagged || (arrived.tagged && arrived.vlan != sent.vlan)) return TagCheck::VlanMismatch;
  if (arrived.tagged && arrived.pcp != sent.pcp) return TagCheck::PcpChanged;
  return TagCheck::AsSent;
}

namespace {

// Two bits or fewer from the magic: one of ours whose magic was hit. Foreign frames on our
// EtherType or UDP port are not expected at all; one this close to the magic, less still.
bool near_magic(std::uint32_t magic) {
  return std::popcount(magic ^ kTuskMagic) <= 2;
}

// The Tusk header at `offset` and the payload after it.
ParseStatus parse_tusk(const std::uint8_t* frame, std::size_t length, std::size_t offset, ParsedFrame& out) {
  // Magic before length: a short foreign frame that happens to use our EtherType is not ours either.
  if (length < offset + 4) return ParseStatus::Truncated;
  const std::uint8_t* h = frame + offset;
  out.tusk_offset = offset;
  if (get32(h + kMagicAt) != kTuskMagic) {
    return near_magic(get32(h + kMagicAt)) && length >= offset + kTuskHeaderLength ? ParseStatus::BadHeader
                                                                                   : ParseStatus::NotTusk;
  }
  if (length < offset + kTuskHeaderLength) return ParseStatus::Truncated;
  if (crc32c(h, kCrcAt) != get32(h + kCrcAt)) return ParseStatus::BadHeader;
  // After the CRC: a CRC-clean frame of another version is a peer mismatch, not corruption, but it is
  // still a header we cannot read.
  if (h[kVersionAt] != kTuskVersion) return ParseStatus::BadHeader;

  const std::size_t payload_offset = offset + kTuskHeaderLength;
  const std::uint16_t payload_length = get16(h + kPayloadLengthAt);
  if (length < payload_offset + payload_length) return ParseStatus::Truncated;

  out.header.version = h[kVersionAt];
  out.header.flags = h[kFlagsAt];
  out.header.stream_id = get16(h + kStreamIdAt);
  out.header.seq = get64(h + kSeqAt);
  out.header.tx_timestamp_ns = get64(h + kTimestampAt);
  out.header.prbs_state = get32(h + kPrbsStateAt);
  out.header.payload_length = payload_length;
  out.payload_offset = payload_offset;
  out.payload = frame + payload_offset;
  out.payload_length = payload_length;
  return ParseStatus::Ok;
}

// The IPv4 and UDP headers at `offset`; on Ok, `offset` moves to the UDP payload.
ParseStatus parse_ipv4_udp(const std::uint8_t* frame, std::size_t length, std::size_t& offset, std::uint16_t udp_port,
                           ParsedFrame& out) {
  if (length < offset + kIpv4HeaderLength) return ParseStatus::Truncated;
  const std::uint8_t* ip = frame + offset;
  if ((ip[0] >> 4) != 4) return ParseStatus::NotTusk;
  const std::size_t ip_header = static_cast<std::size_t>(ip[0] & 0x0F) * 4;
  if (ip_header < kIpv4HeaderLength) return ParseStatus::NotTusk;
  if (ip[kIpProtocolAt] != IPPROTO_UDP) return ParseStatus::NotTusk;
  // More fragments, or a fragment offset: we never fragment (DF), so not one of ours.
  if ((get16(ip + kIpFlagsFragmentAt) & 0x3FFFu) != 0) return ParseStatus::NotTusk;
  if (length < offset + ip_header + kUdpHeaderLength) return ParseStatus::Truncated;
  const std::uint8_t* udp = ip + ip_header;
  if (get16(udp + 2) != udp_port) return ParseStatus::NotTusk;
  const std::size_t tusk_at = offset + ip_header + kUdpHeaderLength;
  out.tusk_offset = tusk_at;
  if (internet_checksum(ip, ip_header) != 0) {
    // Damaged in flight: ours if the Tusk magic (or nearly it) is where ours would be.
    if (length >= tusk_at + 4 && near_magic(get32(frame + tusk_at + kMagicAt))) return ParseStatus::BadHeader;
    return ParseStatus::NotTusk;
  }
  const std::size_t total_length = get16(ip + kIpTotalLengthAt);
  const std::size_t udp_length = get16(udp + 4);
  if (total_length < ip_header + kUdpHeaderLength || udp_length != total_length - ip_header) {
    return ParseStatus::BadHeader;  // lengths that disagree: nothing after them can be trusted
  }
  if (length < offset + total_length) return ParseStatus::Truncated;
  out.ip.src_address = get32(ip + kIpSrcAt);
  out.ip.dst_address = get32(ip + kIpDstAt);
  out.ip.src_port = get16(udp);
  out.ip.dst_port = get16(udp + 2);
  out.ip.dscp = static_cast<std::uint8_t>(ip[kIpTosAt] >> 2);
  out.ip.ecn = static_cast<std::uint8_t>(ip[kIpTosAt] & 0x03);
  out.ip.ttl = ip[kIpTtlAt];
  out.addresses_read = true;
  offset = tusk_at;
  return ParseStatus::Ok;
}

}  // namespace

std::optional<DamagedHeader> damaged_header(const std::uint8_t* frame, std::size_t length, const ParsedFrame& parsed) {
  if (parsed.tusk_offset == 0 || length < parsed.tusk_offset + kTuskHeaderLength) return std::nullopt;
  const std::uint8_t* h = frame + parsed.tusk_offset;
  return DamagedHeader{get16(h + kStreamIdAt), get64(h + kSeqAt)};
}

ParseStatus parse_headers(const std::uint8_t* frame, std::size_t length, ParsedFrame& out, const FrameMatch& match) {
  if (length < kEthernetHeaderLength) return ParseStatus::Truncated;
  std::size_t offset = 12;
  std::uint16_t type = get16(frame + offset);
  bool tagged = false;
  std::uint16_t tci = 0;
  if (type == kVlanTpid) {
    if (length < kEthernetHeaderLength + kVlanTagLength) return ParseStatus::Truncated;
    tagged = true;
    tci = get16(frame + offset + 2);
    offset += kVlanTagLength;
    type = get16(frame + offset);
  }
  offset += 2;
  if (match.encapsulation == Encapsulation::Ipv4Udp) {
    if (type != kIpv4EtherType) return ParseStatus::NotTusk;
    if (const auto status = parse_ipv4_udp(frame, length, offset, match.udp_port, out); status != ParseStatus::Ok) {
      return status;
    }
  } else if (type != match.ethertype) {
    return ParseStatus::NotTusk;
  }
  if (const auto status = parse_tusk(frame, length, offset, out); status != ParseStatus::Ok) return status;
  out.tagged = tagged;
  out.vlan = static_cast<std::uint16_t>(tci & 0x0FFFu);
  out.pcp = static_cast<std::uint8_t>(tci >> 13);
  return ParseStatus::Ok;
}

}  // namespace tusk::dpdk
