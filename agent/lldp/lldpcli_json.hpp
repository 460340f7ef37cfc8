// The neighbours lldpd has seen, read from `lldpcli -f json show neighbors` or `lldpcli -f json0
// show neighbors` (lldpd 1.0.16, Debian 12's): on a port the kernel owns, lldpd already receives
// the LLDPDUs, so the agent asks it rather than opening a socket of its own.
//
// The two formats, as lldpcli writes them (tests/agent/lldp/data/ has real captures):
//   json:  {"lldp": {"interface": ENTRIES}} with ENTRIES an object {"eth0": {...}} when there is
//          one neighbour and an array [{"eth0": {...}}, {"eth1": {...}}] when there are several
//          (one interface may appear in several, one per neighbour); "chassis" an object keyed by
//          the system name ({"spine1": {"id": {"type", "value"}, "mgmt-ip": ...}}), or holding
//          "id" itself when the neighbour sent no name; "mgmt-ip" a string for one address and an
//          array for several; "port": {"id": {"type", "value"}, "descr", "ttl"}. No neighbour at
//          all: {"lldp": {}}. lldpcli writes the bytes of a neighbour's strings as they came, so
//          control characters and ill-formed UTF-8 appear raw inside JSON strings.
//   json0: the same data with every value in an array: {"lldp": [{"interface": [{"name": "eth0",
//          "chassis": [{"id": [{"type", "value"}], "name": [{"value"}], "mgmt-ip": [{"value"}]}],
//          "port": [{"id": [...], "descr": [{"value"}], "ttl": [{"value"}]}]}]}]}.
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/lldp_neighbour.hpp"

namespace tusk::lldp {

// More than a host's ports: lldpcli output with more neighbours than this is refused as hostile.
inline constexpr std::size_t kMaxLldpcliNeighbours = 64;
// 64 neighbours of a switch that lists a few hundred VLANs on each fit with room to spare.
inline constexpr std::size_t kMaxLldpcliOutputBytes = 8 * 1024 * 1024;

// Output that is not what lldpcli writes: the message names the field path (lldp.interface[2].
// eth1.port.id) and what is wrong there.
class LldpcliOutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One neighbour and the local interface it was seen on.
using InterfaceNeighbour = std::pair<std::string, LldpNeighbour>;

// Either format (json0's "lldp" is an array, json's an object), in lldpcli's order. Text fields
// are lldp_text (ill-formed UTF-8 becomes U+FFFD in both formats, as json0 writes it); id
// subtypes are 802.1AB's numbers for lldpcli's "mac", "ip", "ifname", "ifalias" and "local", 0 for
// "unhandled". Throws LldpcliOutputError.
std::vector<InterfaceNeighbour> parse_lldpcli_neighbours(std::string_view text);

}  // namespace tusk::lldp
