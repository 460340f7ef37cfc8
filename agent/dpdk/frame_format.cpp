#include "agent/dpdk/frame_format.hpp"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>

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

// Byte-wise stores and loads: frames are not aligned for wider access, and this is endian-agnostic.
void put16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}

void put32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}

void put64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
}

std::uint16_t get16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

std::uint32_t get32(const std::uint8_t* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | p[i];
  return v;
}

std::uint64_t get64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

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
}

std::size_t header_length(const FrameSpec& spec) {
  return kEthernetHeaderLength + (spec.tagged ? kVlanTagLength : 0) + kTuskHeaderLength;
}

std::size_t payload_length_for(const FrameSpec& spec, std::size_t frame_size) {
  validate(spec);
  const std::size_t headers = header_length(spec);
  if (frame_size < kMinFrameLength) {
    throw std::invalid_argument(fmt::format("frame size {} B is below the Ethernet minimum of {} B (64 B with FCS)",
                                            frame_size, kMinFrameLength));
  }
  if (frame_size < headers) {
    throw std::invalid_argument(fmt::format("frame size {} B cannot hold the {} B of headers{}", frame_size, headers,
                                            spec.tagged ? " (VLAN-tagged)" : ""));
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
  put16(p, spec.ethertype);
  p += 2;

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

ParseStatus parse_headers(const std::uint8_t* frame, std::size_t length, ParsedFrame& out, std::uint16_t ethertype) {
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
  if (type != ethertype) return ParseStatus::NotTusk;

  // Magic before length: a short foreign frame that happens to use our EtherType is not ours either.
  if (length < offset + 4) return ParseStatus::Truncated;
  const std::uint8_t* h = frame + offset;
  if (get32(h + kMagicAt) != kTuskMagic) return ParseStatus::NotTusk;
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
  out.tagged = tagged;
  out.vlan = static_cast<std::uint16_t>(tci & 0x0FFFu);
  out.pcp = static_cast<std::uint8_t>(tci >> 13);
  out.payload_offset = payload_offset;
  out.payload = frame + payload_offset;
  out.payload_length = payload_length;
  return ParseStatus::Ok;
}

}  // namespace tusk::dpdk
