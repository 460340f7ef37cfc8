#include "agent/dpdk/path_probe.hpp"

#include <netinet/in.h>
#include <netinet/ip_icmp.h>

#include <algorithm>
#include <cstring>

#include "agent/dpdk/wire_bytes.hpp"

namespace tusk::dpdk {
namespace {

using wire::get16;
using wire::get32;
using wire::internet_checksum;
using wire::put16;
using wire::put32;

constexpr std::size_t kIcmpHeaderLength = 8;
constexpr std::size_t kProbeUdpLength = kUdpHeaderLength + path::kProbePayloadLength;
constexpr std::size_t kProbeIpLength = kIpv4HeaderLength + kProbeUdpLength;

// The IPv4 header at `frame`'s network layer, skipping one 802.1Q tag; nullptr when not IPv4.
const std::uint8_t* ipv4_header(const std::uint8_t* frame, std::size_t length, std::size_t& offset) {
  offset = kEthernetHeaderLength;
  if (length < offset + kIpv4HeaderLength) return nullptr;
  std::uint16_t type = get16(frame + 12);
  if (type == kVlanTpid) {
    offset += kVlanTagLength;
    if (length < offset + kIpv4HeaderLength) return nullptr;
    type = get16(frame + 16);
  }
  return type == kIpv4EtherType ? frame + offset : nullptr;
}

}  // namespace

std::size_t write_probe(const FrameSpec& spec, std::uint8_t ttl, std::uint16_t sequence, std::uint8_t* frame) {
  std::uint8_t* p = frame;
  std::copy(spec.dst.begin(), spec.dst.end(), p);
  std::copy(spec.src.begin(), spec.src.end(), p + 6);
  p += 12;
  if (spec.tagged) {
    put16(p, kVlanTpid);
    put16(p + 2, static_cast<std::uint16_t>((spec.pcp << 13) | spec.vlan));
    p += kVlanTagLength;
  }
  put16(p, kIpv4EtherType);
  p += 2;
  p[0] = 0x45;
  p[1] = static_cast<std::uint8_t>((spec.ip.dscp << 2) | spec.ip.ecn);
  put16(p + 2, static_cast<std::uint16_t>(kProbeIpLength));
  // The identification is in no ECMP hash: it tells the quoted probe's TTL and sequence.
  put16(p + 4, static_cast<std::uint16_t>((sequence << 4) | (ttl & 0x0F)));
  put16(p + 6, 0x4000);  // don't fragment
  p[8] = ttl;
  p[9] = IPPROTO_UDP;
  put16(p + 10, 0);
  put32(p + 12, spec.ip.src_address);
  put32(p + 16, spec.ip.dst_address);
  put16(p + 10, internet_checksum(p, kIpv4HeaderLength));
  p += kIpv4HeaderLength;
  put16(p, spec.ip.src_port);
  put16(p + 2, spec.ip.dst_port);
  put16(p + 4, static_cast<std::uint16_t>(kProbeUdpLength));
  put16(p + 6, 0);
  path::write_probe_payload(ttl, p + kUdpHeaderLength);
  const auto length = static_cast<std::size_t>(p + kProbeUdpLength - frame);
  return length;  // 74 bytes at least: above the Ethernet minimum, no padding
}

std::optional<path::ProbeReply> parse_probe_reply(const Ipv4Interface& us, const std::uint8_t* frame,
                                                  std::size_t length) {
  std::size_t offset = 0;
  const std::uint8_t* ip = ipv4_header(frame, length, offset);
  if (ip == nullptr || us.address == 0) return std::nullopt;
  const std::size_t ip_header = static_cast<std::size_t>(ip[0] & 0x0F) * 4;
  if ((ip[0] >> 4) != 4 || ip_header < kIpv4HeaderLength || ip[9] != IPPROTO_ICMP || get32(ip + 16) != us.address) {
    return std::nullopt;
  }
  if ((get16(ip + 6) & 0x3FFFu) != 0) return std::nullopt;  // a fragment
  const std::size_t total = get16(ip + 2);
  if (total < ip_header + kIcmpHeaderLength + kIpv4HeaderLength + kUdpHeaderLength || offset + total > length) {
    return std::nullopt;
  }
  if (internet_checksum(ip, ip_header) != 0) return std::nullopt;
  const std::uint8_t* icmp = ip + ip_header;
  const std::size_t icmp_length = total - ip_header;
  if (internet_checksum(icmp, icmp_length) != 0) return std::nullopt;  // damaged on its way back

  path::ProbeReply reply;
  reply.responder = get32(ip + 12);
  const std::uint8_t* quoted = icmp + kIcmpHeaderLength;
  const std::size_t quoted_length = icmp_length - kIcmpHeaderLength;
  const std::size_t quoted_header = static_cast<std::size_t>(quoted[0] & 0x0F) * 4;
  if ((quoted[0] >> 4) != 4 || quoted_header < kIpv4HeaderLength || quoted_length < quoted_header + kUdpHeaderLength ||
      quoted[9] != IPPROTO_UDP || get32(quoted + 12) != us.address) {
    return std::nullopt;
  }
  const std::uint16_t identification = get16(quoted + 4);
  reply.ttl = static_cast<std::uint8_t>(identification & 0x0F);
  reply.sequence = static_cast<std::uint16_t>(identification >> 4);
  reply.dst_address = get32(quoted + 16);
  const std::uint8_t* udp = quoted + quoted_header;
  reply.src_port = get16(udp);
  reply.dst_port = get16(udp + 2);
  // Test frames are longer and carry the Tusk magic; a probe's length field is its own.
  if (get16(udp + 4) != kProbeUdpLength || reply.ttl == 0 || reply.ttl > path::kMaxProbeTtl) return std::nullopt;
  const std::size_t payload_quoted = quoted_length - quoted_header - kUdpHeaderLength;
  if (payload_quoted >= 4 && get32(udp + kUdpHeaderLength) == kTuskMagic) return std::nullopt;
  if (payload_quoted >= path::kProbePayloadLength) {
    std::uint8_t expected[path::kProbePayloadLength];
    path::write_probe_payload(reply.ttl, expected);
    reply.damaged = std::memcmp(expected, udp + kUdpHeaderLength, path::kProbePayloadLength) != 0;
  }

  if (icmp[0] == ICMP_TIME_EXCEEDED && icmp[1] == 0) {
    reply.answer = path::ProbeAnswer::TimeExceeded;
  } else if (icmp[0] == ICMP_DEST_UNREACH) {
    reply.answer = icmp[1] == ICMP_PORT_UNREACH && reply.responder == reply.dst_address
                       ? path::ProbeAnswer::Destination
                       : path::ProbeAnswer::Unreachable;
  } else {
    return std::nullopt;
  }
  return reply;
}

bool may_be_probe_for_us(const Ipv4Interface& us, const std::uint8_t* frame, std::size_t length) {
  if (us.address == 0 || length < kEthernetHeaderLength + kProbeIpLength) return false;
  const std::uint8_t* ip = frame + kEthernetHeaderLength;
  return get16(frame + 12) == kIpv4EtherType && ip[0] == 0x45 && ip[9] == IPPROTO_UDP && get32(ip + 16) == us.address &&
         get16(ip + 2) == kProbeIpLength;
}

std::size_t answer_probe(const Ipv4Interface& us, const std::uint8_t* frame, std::size_t length, std::uint8_t* reply) {
  if (!may_be_probe_for_us(us, frame, length)) return 0;
  const std::uint8_t* ip = frame + kEthernetHeaderLength;
  if ((get16(ip + 6) & 0x3FFFu) != 0 || internet_checksum(ip, kIpv4HeaderLength) != 0) return 0;
  const std::uint8_t* udp = ip + kIpv4HeaderLength;
  if (get16(udp + 4) != kProbeUdpLength || get32(udp + kUdpHeaderLength) != path::kProbeMagic) return 0;

  std::copy(frame + 6, frame + 12, reply);  // back to whoever handed it to us
  std::copy(us.mac.begin(), us.mac.end(), reply + 6);
  put16(reply + 12, kIpv4EtherType);
  std::uint8_t* out = reply + kEthernetHeaderLength;
  const std::size_t icmp_length = kIcmpHeaderLength + kProbeIpLength;
  out[0] = 0x45;
  out[1] = 0;
  put16(out + 2, static_cast<std::uint16_t>(kIpv4HeaderLength + icmp_length));
  put16(out + 4, 0);
  put16(out + 6, 0);
  out[8] = 64;
  out[9] = IPPROTO_ICMP;
  put16(out + 10, 0);
  put32(out + 12, us.address);
  put32(out + 16, get32(ip + 12));
  put16(out + 10, internet_checksum(out, kIpv4HeaderLength));
  std::uint8_t* icmp = out + kIpv4HeaderLength;
  icmp[0] = ICMP_DEST_UNREACH;
  icmp[1] = ICMP_PORT_UNREACH;
  put16(icmp + 2, 0);
  put32(icmp + 4, 0);
  std::memcpy(icmp + kIcmpHeaderLength, ip, kProbeIpLength);
  put16(icmp + 2, internet_checksum(icmp, icmp_length));
  return kEthernetHeaderLength + kIpv4HeaderLength + icmp_length;
}

}  // namespace tusk::dpdk
