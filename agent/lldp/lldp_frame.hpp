// LLDPDUs (IEEE 802.1AB-2016) as Ethernet frames, both ways: a received frame becomes the
// LldpNeighbour it describes, and the agent's own description becomes a frame it can send on a
// port that no kernel (and so no lldpd) owns, such as a DPDK port.
//
// Pure functions on caller-owned bytes, callable from any thread. is_lldp_frame is cheap enough
// for every frame of a receive loop; parse_lldp_frame allocates only the neighbour's strings and,
// for a frame it rejects, the reason.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/lldp_neighbour.hpp"

namespace tusk::lldp {

inline constexpr std::uint16_t kLldpEtherType = 0x88CC;
inline constexpr std::uint16_t kVlanEtherType = 0x8100;  // an 802.1Q C-tag
inline constexpr std::uint16_t kQinQEtherType = 0x88A8;  // an 802.1ad S-tag, taken as one tag too
// Nearest bridge, which no bridge forwards: the neighbour on the other end of the cable.
inline constexpr std::array<std::uint8_t, 6> kNearestBridgeMac{0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E};
inline constexpr std::size_t kMinEthernetFrameBytes = 60;  // without the FCS, which the NIC adds

// An Ethernet frame whose EtherType, or the one after a single VLAN tag, is LLDP's. Reads at most
// the first 18 bytes.
bool is_lldp_frame(const std::uint8_t* frame, std::size_t length);

// Why a frame is not an LLDPDU parse_lldp_frame accepts.
enum class LldpFrameError : std::uint8_t {
  None,
  NotLldp,               // too short for an Ethernet header, or another EtherType
  TruncatedTlv,          // a TLV's 2-byte header, or its value, runs past the frame
  MissingChassisId,      // the first TLV is not a Chassis ID
  MissingPortId,         // the second is not a Port ID
  MissingTtl,            // the third is not a TTL
  DuplicateMandatory,    // a Chassis ID, Port ID or TTL TLV after the first three
  DuplicateOptional,     // a second Port Description or System Name (which name would be the one?)
  BadChassisId,          // length not 2..256, or a reserved subtype (0, 8..255)
  BadPortId,             // the same for a Port ID
  BadTtl,                // length not 2
  BadEnd,                // an End TLV whose length is not 0
  BadManagementAddress,  // address string length not 2..32, or the TLV too short for its fields
};

std::string_view to_string(LldpFrameError error);

struct LldpFrameParse {
  std::optional<LldpNeighbour> neighbour;  // set exactly when error is None
  LldpFrameError error = LldpFrameError::None;
  std::string reason;  // for a person: what is wrong, at which byte of the frame; empty when Ok
  // Whether the LLDPDU ended with an End TLV. The standard requires one, but a frame that ends
  // right after a whole TLV is accepted without it: the frame's own length bounds the LLDPDU,
  // every TLV in it is whole and checked, and some senders leave End out. The caller may warn.
  bool end_tlv_seen = false;
  std::uint16_t vlan_id = 0;  // the tag's VLAN ID, 0 for an untagged frame
};

// Parses an LLDPDU frame (untagged or with one VLAN tag; any destination address: the three LLDP
// group addresses are the usual ones, and a frame delivered to this port is what it saw). The
// first three TLVs must be Chassis ID, Port ID and TTL in that order, each once; Port Description
// and System Name at most once; TLVs it has no field for (System Description, Capabilities,
// organisation-specific, reserved types) are skipped whole; bytes after the End TLV are padding.
// Reads nothing past frame + length.
LldpFrameParse parse_lldp_frame(const std::uint8_t* frame, std::size_t length);

// The frame that announces `self` on a port with MAC `source`: Chassis ID, Port ID, TTL, then Port
// Description, System Name and Management Address where `self` has them, End, padded to
// kMinEthernetFrameBytes. Each field is encoded so that parse_lldp_frame gives `self` back: a MAC
// subtype's id as "aa:bb:cc:dd:ee:ff", a network address subtype's and the management address as
// IPv4 or IPv6 text, other ids and texts as their bytes. Throws std::invalid_argument naming the
// field that cannot be encoded (empty id, reserved subtype, text past 255 bytes, TTL past 65535,
// an address that does not parse).
std::vector<std::uint8_t> build_lldp_frame(const LldpNeighbour& self, const std::array<std::uint8_t, 6>& source,
                                           const std::array<std::uint8_t, 6>& destination = kNearestBridgeMac);

}  // namespace tusk::lldp
