#include "agent/lldp/lldp_frame.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tusk::lldp {

namespace {

// TLV types (802.1AB-2016 table 8-1) and the subtypes whose values are not text.
constexpr std::uint8_t kEndTlv = 0, kChassisIdTlv = 1, kPortIdTlv = 2, kTtlTlv = 3, kPortDescriptionTlv = 4,
                       kSystemNameTlv = 5, kManagementAddressTlv = 8;
constexpr std::uint8_t kChassisMacSubtype = 4, kChassisNetworkSubtype = 5;
constexpr std::uint8_t kPortMacSubtype = 3, kPortNetworkSubtype = 4;
constexpr std::uint8_t kLastIdSubtype = 7;
// The first three TLVs, in their order, and what is wrong where one is not there.
constexpr std::uint8_t kMandatoryTlvs[] = {kChassisIdTlv, kPortIdTlv, kTtlTlv};
constexpr LldpFrameError kMissingMandatory[] = {LldpFrameError::MissingChassisId, LldpFrameError::MissingPortId,
                                                LldpFrameError::MissingTtl};
// IANA address families, the first byte of a network address.
constexpr std::uint8_t kFamilyIpv4 = 1, kFamilyIpv6 = 2, kFamily802 = 6;
constexpr std::size_t kEthernetHeaderBytes = 14, kVlanTagBytes = 4, kTlvHeaderBytes = 2;
constexpr std::size_t kMaxTlvValueBytes = 511;  // 9 bits of length
constexpr std::size_t kMaxIdValueBytes = 255;   // a Chassis ID's or Port ID's, after its subtype

std::uint16_t lldp_load16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

std::string_view lldp_tlv_name(std::uint8_t type) {
  switch (type) {
    case kEndTlv:
      return "End";
    case kChassisIdTlv:
      return "Chassis ID";
    case kPortIdTlv:
      return "Port ID";
    case kTtlTlv:
      return "TTL";
    case kPortDescriptionTlv:
      return "Port Description";
    case kSystemNameTlv:
      return "System Name";
    case 6:
      return "System Description";
    case 7:
      return "System Capabilities";
    case kManagementAddressTlv:
      return "Management Address";
    case 127:
      return "organisation-specific";
    default:
      return "reserved-type";
  }
}

// One TLV inside the frame: its type, where its header starts, and its value.
struct LldpTlv {
  std::uint8_t type = 0;
  std::size_t at = 0;
  const std::uint8_t* value = nullptr;
  std::size_t length = 0;
};

// "aa:bb:cc", of at most the first 85 bytes: 254 characters, within a text field's 255.
std::string colon_hex(const std::uint8_t* p, std::size_t n) {
  n = std::min(n, (kMaxLldpTextBytes + 1) / 3);
  std::string text;
  text.reserve(n * 3);
  for (std::size_t i = 0; i < n; ++i) text += fmt::format("{}{:02x}", i == 0 ? "" : ":", p[i]);
  return text;
}

// A network address (IANA family byte, then the address) as people write it; an unknown family
// or a length that does not fit it as hex of every byte, family first.
std::string network_address_text(const std::uint8_t* p, std::size_t n) {
  if (n == 5 && p[0] == kFamilyIpv4) return fmt::format("{}.{}.{}.{}", p[1], p[2], p[3], p[4]);
  if (n == 17 && p[0] == kFamilyIpv6) {
    char text[INET6_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET6, p + 1, text, sizeof text) != nullptr) return text;
  }
  if (n == 7 && p[0] == kFamily802) return colon_hex(p + 1, 6);
  return colon_hex(p, n);
}

// A Chassis ID's or Port ID's value after its subtype byte, as text by subtype.
std::string id_text(bool is_chassis, std::uint8_t subtype, const std::uint8_t* p, std::size_t n) {
  const bool mac = subtype == (is_chassis ? kChassisMacSubtype : kPortMacSubtype);
  const bool network = subtype == (is_chassis ? kChassisNetworkSubtype : kPortNetworkSubtype);
  if (mac) return colon_hex(p, n);
  if (network) return network_address_text(p, n);
  return lldp_text(std::string_view(reinterpret_cast<const char*>(p), n));
}

LldpFrameParse lldp_rejected(LldpFrameError error, std::string reason) {
  LldpFrameParse result;
  result.error = error;
  result.reason = std::move(reason);
  return result;
}

// Where the LLDPDU starts (after the Ethernet header and at most one VLAN tag), or 0.
std::size_t lldpdu_offset(const std::uint8_t* frame, std::size_t length, std::uint16_t& vlan_id) {
  if (length < kEthernetHeaderBytes) return 0;
  const std::uint16_t ether_type = lldp_load16(frame + 12);
  if (ether_type == kLldpEtherType) return kEthernetHeaderBytes;
  if (ether_type != kVlanEtherType && ether_type != kQinQEtherType) return 0;
  if (length < kEthernetHeaderBytes + kVlanTagBytes || lldp_load16(frame + 16) != kLldpEtherType) return 0;
  vlan_id = lldp_load16(frame + 14) & 0x0FFF;
  return kEthernetHeaderBytes + kVlanTagBytes;
}

// The TLV at `at`, or an error when its header or value runs past the frame.
std::optional<LldpTlv> lldp_tlv_at(const std::uint8_t* frame, std::size_t length, std::size_t at, std::string& reason) {
  if (length - at < kTlvHeaderBytes) {
    reason = fmt::format("byte {}: a TLV header takes 2 bytes, the frame has {} left", at, length - at);
    return std::nullopt;
  }
  const std::uint16_t header = lldp_load16(frame + at);
  LldpTlv tlv{static_cast<std::uint8_t>(header >> 9), at, frame + at + kTlvHeaderBytes,
              static_cast<std::size_t>(header & kMaxTlvValueBytes)};
  if (tlv.length > length - at - kTlvHeaderBytes) {
    reason = fmt::format("byte {}: the {} TLV's {} bytes run past the frame's end ({} bytes left)", at,
                         lldp_tlv_name(tlv.type), tlv.length, length - at - kTlvHeaderBytes);
    return std::nullopt;
  }
  return tlv;
}

// The first three TLVs: Chassis ID, Port ID, TTL, in that order. Empty when `tlv` is right.
std::optional<LldpFrameParse> read_mandatory_tlv(const LldpTlv& tlv, std::size_t index, LldpNeighbour& neighbour) {
  if (tlv.type != kMandatoryTlvs[index]) {
    return lldp_rejected(kMissingMandatory[index],
                         fmt::format("byte {}: TLV {} is {}, where 802.1AB requires {}", tlv.at, index + 1,
                                     lldp_tlv_name(tlv.type), lldp_tlv_name(kMandatoryTlvs[index])));
  }
  if (tlv.type == kTtlTlv) {
    if (tlv.length != 2) {
      return lldp_rejected(LldpFrameError::BadTtl,
                           fmt::format("byte {}: a TTL TLV is 2 bytes long, this one {}", tlv.at, tlv.length));
    }
    neighbour.ttl_s = lldp_load16(tlv.value);
    return std::nullopt;
  }
  const bool is_chassis = tlv.type == kChassisIdTlv;
  const std::uint8_t subtype = tlv.length > 0 ? tlv.value[0] : 0;
  if (tlv.length < 2 || tlv.length > kMaxIdValueBytes + 1 || subtype == 0 || subtype > kLastIdSubtype) {
    return lldp_rejected(is_chassis ? LldpFrameError::BadChassisId : LldpFrameError::BadPortId,
                         fmt::format("byte {}: a {} TLV holds a subtype (1..7) and 1..255 bytes; this one is {} "
                                     "bytes long with subtype {}",
                                     tlv.at, lldp_tlv_name(tlv.type), tlv.length, subtype));
  }
  std::string text = id_text(is_chassis, subtype, tlv.value + 1, tlv.length - 1);
  (is_chassis ? neighbour.chassis_id : neighbour.port_id) = std::move(text);
  (is_chassis ? neighbour.chassis_id_subtype : neighbour.port_id_subtype) = subtype;
  return std::nullopt;
}

// What the TLVs after the first three have given so far.
struct OptionalTlvsSeen {
  bool port_description = false;
  bool system_name = false;
  bool ipv4_management_address = false;
  bool management_address = false;
};

// A Management Address TLV: address string length (1 + the address's), family, address, then
// interface numbering subtype and number; the OID after them is not read.
std::optional<LldpFrameParse> read_management_address(const LldpTlv& tlv, OptionalTlvsSeen& seen,
                                                      LldpNeighbour& neighbour) {
  const std::size_t string_length = tlv.length > 0 ? tlv.value[0] : 0;
  if (string_length < 2 || string_length > 32 || tlv.length < 1 + string_length + 5) {
    return lldp_rejected(LldpFrameError::BadManagementAddress,
                         fmt::format("byte {}: a Management Address TLV of {} bytes with an address string of {} "
                                     "(2..32, then 5 bytes of interface number)",
                                     tlv.at, tlv.length, string_length));
  }
  const bool ipv4 = tlv.value[1] == kFamilyIpv4 && string_length == 5;
  if (!seen.management_address || (ipv4 && !seen.ipv4_management_address)) {
    neighbour.management_address = network_address_text(tlv.value + 1, string_length);
    seen.management_address = true;
    seen.ipv4_management_address = ipv4;
  }
  return std::nullopt;
}

// A TLV after the first three and before End. Empty when it is acceptable.
std::optional<LldpFrameParse> read_optional_tlv(const LldpTlv& tlv, OptionalTlvsSeen& seen, LldpNeighbour& neighbour) {
  switch (tlv.type) {
    case kChassisIdTlv:
    case kPortIdTlv:
    case kTtlTlv:
      return lldp_rejected(
          LldpFrameError::DuplicateMandatory,
          fmt::format("byte {}: a second {} TLV (802.1AB allows one)", tlv.at, lldp_tlv_name(tlv.type)));
    case kPortDescriptionTlv:
    case kSystemNameTlv: {
      bool& seen_before = tlv.type == kSystemNameTlv ? seen.system_name : seen.port_description;
      if (seen_before) {
        return lldp_rejected(LldpFrameError::DuplicateOptional,
                             fmt::format("byte {}: a second {} TLV", tlv.at, lldp_tlv_name(tlv.type)));
      }
      seen_before = true;
      std::string text = lldp_text(std::string_view(reinterpret_cast<const char*>(tlv.value), tlv.length));
      (tlv.type == kSystemNameTlv ? neighbour.system_name : neighbour.port_description) = std::move(text);
      return std::nullopt;
    }
    case kManagementAddressTlv:
      return read_management_address(tlv, seen, neighbour);
    default:
      return std::nullopt;  // nothing of ours in it
  }
}

// The builder's side: each field of an LldpNeighbour as the bytes a TLV carries.

void append_lldp_tlv(std::vector<std::uint8_t>& frame, std::uint8_t type, const std::vector<std::uint8_t>& value) {
  frame.push_back(static_cast<std::uint8_t>((type << 1) | (value.size() >> 8)));
  frame.push_back(static_cast<std::uint8_t>(value.size()));
  frame.insert(frame.end(), value.begin(), value.end());
}

// "aa:bb:cc" as its bytes; nullopt for anything else.
std::optional<std::vector<std::uint8_t>> colon_hex_bytes(std::string_view text) {
  std::vector<std::uint8_t> bytes;
  for (std::size_t at = 0; at < text.size(); at += 3) {
    if (at + 2 > text.size() || (at + 2 < text.size() && text[at + 2] != ':')) return std::nullopt;
    unsigned value = 0;
    for (std::size_t i = at; i < at + 2; ++i) {
      const char c = text[i];
      const int digit = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
      if (digit < 0) return std::nullopt;
      value = value * 16 + static_cast<unsigned>(digit);
    }
    bytes.push_back(static_cast<std::uint8_t>(value));
  }
  if (bytes.empty() || text.back() == ':') return std::nullopt;
  return bytes;
}

// An IPv4 or IPv6 address as its IANA family byte and address, a MAC address as family 802's.
// IPv6 only as inet_ntop writes it: "00:fe:80:00:00:00:00:00" is what network_address_text makes
// of 8 bytes of an unknown family, and read as IPv6 it would come back as "0:fe:80::".
std::optional<std::vector<std::uint8_t>> network_address_bytes(const std::string& text) {
  std::uint8_t address[16] = {};
  if (inet_pton(AF_INET, text.c_str(), address) == 1) {
    return std::vector<std::uint8_t>{kFamilyIpv4, address[0], address[1], address[2], address[3]};
  }
  char canonical[INET6_ADDRSTRLEN] = {};
  if (inet_pton(AF_INET6, text.c_str(), address) == 1 &&
      inet_ntop(AF_INET6, address, canonical, sizeof canonical) != nullptr && text == canonical) {
    std::vector<std::uint8_t> bytes{kFamilyIpv6};
    bytes.insert(bytes.end(), address, address + 16);
    return bytes;
  }
  auto mac = colon_hex_bytes(text);
  if (mac && mac->size() == 6) {
    mac->insert(mac->begin(), kFamily802);
    return mac;
  }
  return std::nullopt;
}

// A Chassis ID's or Port ID's value: its subtype, then the id's bytes.
std::vector<std::uint8_t> id_value(bool is_chassis, std::uint8_t subtype, const std::string& id) {
  const char* field = is_chassis ? "chassis_id" : "port_id";
  if (subtype == 0 || subtype > kLastIdSubtype) {
    throw std::invalid_argument(fmt::format("{}_subtype {}: 802.1AB's subtypes are 1..7", field, subtype));
  }
  std::optional<std::vector<std::uint8_t>> bytes;
  if (subtype == (is_chassis ? kChassisMacSubtype : kPortMacSubtype)) {
    bytes = colon_hex_bytes(id);
  } else if (subtype == (is_chassis ? kChassisNetworkSubtype : kPortNetworkSubtype)) {
    bytes = network_address_bytes(id);
  } else {
    bytes.emplace(id.begin(), id.end());
  }
  if (!bytes || bytes->empty() || bytes->size() > kMaxIdValueBytes) {
    throw std::invalid_argument(
        fmt::format("{} \"{}\": not 1..255 bytes as subtype {} takes them", field, lldp_text(id), subtype));
  }
  bytes->insert(bytes->begin(), subtype);
  return *bytes;
}

std::vector<std::uint8_t> text_value(const char* field, const std::string& text) {
  if (text.size() > kMaxLldpTextBytes) {
    throw std::invalid_argument(fmt::format("{}: {} bytes, more than the 255 a TLV holds", field, text.size()));
  }
  return {text.begin(), text.end()};
}

// A Management Address TLV's value: the address string, interface numbering "unknown" (1) with
// number 0, and an empty OID.
std::vector<std::uint8_t> management_address_value(const std::string& address) {
  const auto bytes = network_address_bytes(address);
  if (!bytes) {
    throw std::invalid_argument(fmt::format(
        "management_address \"{}\": not an IPv4 address, an IPv6 address as inet_ntop writes it or a MAC address",
        lldp_text(address)));
  }
  std::vector<std::uint8_t> value{static_cast<std::uint8_t>(bytes->size())};
  value.insert(value.end(), bytes->begin(), bytes->end());
  value.insert(value.end(), {1, 0, 0, 0, 0, 0});
  return value;
}

}  // namespace

bool is_lldp_frame(const std::uint8_t* frame, std::size_t length) {
  std::uint16_t vlan_id = 0;
  return lldpdu_offset(frame, length, vlan_id) != 0;
}

std::string_view to_string(LldpFrameError error) {
  switch (error) {
    case LldpFrameError::None:
      return "ok";
    case LldpFrameError::NotLldp:
      return "not an LLDP frame";
    case LldpFrameError::TruncatedTlv:
      return "TLV past the frame's end";
    case LldpFrameError::MissingChassisId:
      return "first TLV not a Chassis ID";
    case LldpFrameError::MissingPortId:
      return "second TLV not a Port ID";
    case LldpFrameError::MissingTtl:
      return "third TLV not a TTL";
    case LldpFrameError::DuplicateMandatory:
      return "duplicate Chassis ID, Port ID or TTL TLV";
    case LldpFrameError::DuplicateOptional:
      return "duplicate Port Description or System Name TLV";
    case LldpFrameError::BadChassisId:
      return "malformed Chassis ID TLV";
    case LldpFrameError::BadPortId:
      return "malformed Port ID TLV";
    case LldpFrameError::BadTtl:
      return "malformed TTL TLV";
    case LldpFrameError::BadEnd:
      return "End TLV with a length";
    case LldpFrameError::BadManagementAddress:
      return "malformed Management Address TLV";
  }
  return "unknown";
}

LldpFrameParse parse_lldp_frame(const std::uint8_t* frame, std::size_t length) {
  std::uint16_t vlan_id = 0;
  std::size_t at = lldpdu_offset(frame, length, vlan_id);
  if (at == 0) {
    return lldp_rejected(LldpFrameError::NotLldp,
                         length < kEthernetHeaderBytes
                             ? fmt::format("{} bytes, shorter than an Ethernet header", length)
                             : fmt::format("EtherType 0x{:04x}, not LLDP's 0x88cc", lldp_load16(frame + 12)));
  }
  LldpNeighbour neighbour;
  OptionalTlvsSeen seen;
  bool end_tlv_seen = false;
  std::size_t index = 0;
  for (; at < length && !end_tlv_seen; ++index) {
    std::string reason;
    const std::optional<LldpTlv> tlv = lldp_tlv_at(frame, length, at, reason);
    if (!tlv) return lldp_rejected(LldpFrameError::TruncatedTlv, std::move(reason));
    std::optional<LldpFrameParse> rejection;
    if (index < 3) {
      rejection = read_mandatory_tlv(*tlv, index, neighbour);
    } else if (tlv->type == kEndTlv) {
      if (tlv->length != 0) {
        rejection = lldp_rejected(LldpFrameError::BadEnd,
                                  fmt::format("byte {}: an End TLV is 0 bytes long, this one {}", at, tlv->length));
      }
      end_tlv_seen = true;
    } else {
      rejection = read_optional_tlv(*tlv, seen, neighbour);
    }
    if (rejection) return std::move(*rejection);
    at += kTlvHeaderBytes + tlv->length;
  }
  if (index < 3) {
    return lldp_rejected(kMissingMandatory[index], fmt::format("byte {}: the frame ends where 802.1AB requires {}", at,
                                                               lldp_tlv_name(kMandatoryTlvs[index])));
  }
  LldpFrameParse result;
  result.neighbour = std::move(neighbour);
  result.end_tlv_seen = end_tlv_seen;
  result.vlan_id = vlan_id;
  return result;
}

std::vector<std::uint8_t> build_lldp_frame(const LldpNeighbour& self, const std::array<std::uint8_t, 6>& source,
                                           const std::array<std::uint8_t, 6>& destination) {
  if (self.ttl_s > 0xFFFF) {
    throw std::invalid_argument(fmt::format("ttl_s {}: more than the TTL TLV's 65535", self.ttl_s));
  }
  std::vector<std::uint8_t> frame(destination.begin(), destination.end());
  frame.insert(frame.end(), source.begin(), source.end());
  frame.push_back(static_cast<std::uint8_t>(kLldpEtherType >> 8));
  frame.push_back(static_cast<std::uint8_t>(kLldpEtherType & 0xFF));
  append_lldp_tlv(frame, kChassisIdTlv, id_value(true, self.chassis_id_subtype, self.chassis_id));
  append_lldp_tlv(frame, kPortIdTlv, id_value(false, self.port_id_subtype, self.port_id));
  append_lldp_tlv(frame, kTtlTlv, {static_cast<std::uint8_t>(self.ttl_s >> 8), static_cast<std::uint8_t>(self.ttl_s)});
  if (!self.port_description.empty()) {
    append_lldp_tlv(frame, kPortDescriptionTlv, text_value("port_description", self.port_description));
  }
  if (!self.system_name.empty()) {
    append_lldp_tlv(frame, kSystemNameTlv, text_value("system_name", self.system_name));
  }
  if (!self.management_address.empty()) {
    append_lldp_tlv(frame, kManagementAddressTlv, management_address_value(self.management_address));
  }
  append_lldp_tlv(frame, kEndTlv, {});
  if (frame.size() < kMinEthernetFrameBytes) frame.resize(kMinEthernetFrameBytes, 0);
  return frame;
}

}  // namespace tusk::lldp
