// A port's LLDP neighbour (IEEE 802.1AB): what the agent learns of the switch port at the other end
// of each link it tests, from a received LLDPDU (agent/lldp/lldp_frame) or from lldpd
// (agent/lldp/lldpcli_json), and what the controller shows of it. Plain data; every text field
// came from a peer, so it holds printable text only (lldp_text) and is at most kMaxLldpTextBytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tusk {

// The most a text field holds: the longest string the standard's TLVs carry (a Port ID's 255
// octets, a System Name's 255). An escaped byte takes 4 of them, so such a text is cut shorter.
inline constexpr std::size_t kMaxLldpTextBytes = 255;

struct LldpNeighbour {
  // As text by subtype: a MAC address as "aa:bb:cc:dd:ee:ff", a network address as "192.0.2.1"
  // or "2001:db8::1", any other subtype as lldp_text of its bytes.
  std::string chassis_id;
  std::string port_id;
  std::string port_description;
  std::string system_name;
  // The first IPv4 management address the neighbour gave, else its first address of any family:
  // one address is what a person needs to reach the switch, and a switch commonly gives an IPv4
  // address and an IPv6 link-local one.
  std::string management_address;
  std::uint32_t ttl_s = 0;
  // How long ago lldpd first heard this neighbour on the port (lldpcli's "age"); 0 when unknown, as
  // from a frame. After a cable moves, the old neighbour stays until its TTL runs out: the
  // youngest is the one there now.
  std::uint32_t age_s = 0;
  // 802.1AB's subtypes (chassis: 4 MAC address, 5 network address, 7 locally assigned, ...; port:
  // 3 MAC address, 5 interface name, 7 locally assigned, ...); 0 where the source did not say
  // which (lldpcli names the component subtypes "unhandled").
  std::uint8_t chassis_id_subtype = 0;
  std::uint8_t port_id_subtype = 0;

  bool operator==(const LldpNeighbour&) const = default;
};

// `bytes` from a peer as a text field: printable() (control characters and ill-formed UTF-8
// escaped as \xNN, a backslash doubled), then cut to at most kMaxLldpTextBytes on a boundary
// between characters and escapes, so no escape is left half written.
std::string lldp_text(std::string_view bytes);

}  // namespace tusk
