// Is every cable where the topology file says? The LLDP neighbours the switches report (LLDP-MIB,
// read over SNMP) and those the agents' hosts heard on their ports, against the file's links,
// before any traffic: a cable that lands elsewhere, a
// switch port whose switch neighbour is silent, and a neighbour the file does not know are named
// (device, port, expected, found), and every cable LLDP shows is listed with both its ends, as
// ibdiagnet compares a discovered fabric with its expected topology.
#pragma once

#include <string>
#include <vector>

#include "controller/switches/host_lldp.hpp"
#include "controller/switches/switch_reading.hpp"
#include "controller/topology/fabric_topology.hpp"

namespace tusk {

struct CablingFinding {
  enum class Kind { Elsewhere, NoNeighbour, NotInFile };
  Kind kind = Kind::Elsewhere;
  std::string device, port;  // the port that saw it (or should have)
  std::string expected;      // "s2:l1", or "" for a cable the file does not have
  std::string found;         // "s1:l1", or "" for no neighbour
  std::string source;        // "LLDP-MIB of l1"
  std::string text() const;
};
const char* to_string(CablingFinding::Kind kind);

// A cable as LLDP saw it: both ends by the names the neighbours give themselves.
struct SeenCable {
  std::string a, b;  // "l1:s1", "s1:l1": the lesser first
  bool in_file = false;
};

struct CablingCheck {
  std::vector<CablingFinding> findings;
  std::vector<SeenCable> seen;   // every cable some switch's LLDP reports, once
  std::size_t ends_checked = 0;  // file's link ends at switches whose LLDP was read
  std::size_t ends_matched = 0;
  std::vector<std::string> unverified;  // ends whose far side is a host that sends no LLDP
  std::vector<std::string> unreadable;  // switches whose LLDP could not be read
  std::string not_checked;              // why no port could be checked ("" when some was)
  bool clean() const { return findings.empty(); }
  // Whether any port was checked: an `enforce` that checked nothing enforced nothing.
  bool checked() const { return ends_checked > 0 || !findings.empty(); }
  std::string text() const;  // one line for the summary
};

// The check that could not be made: no topology file, or nothing that hears LLDP (no switch to
// read, no host port the file places that heard a neighbour). `why` says what is lacking.
CablingCheck cabling_not_checked(std::string why);

// An agent's LLDP source as the report names it: "lldpd", "frames", or "" for anything else (a peer's text).
const char* lldp_source_name(const std::string& source);

CablingCheck check_cabling(const FabricTopology& topology, const std::vector<SwitchReading>& switches,
                           const std::vector<HostLldp>& hosts = {});

}  // namespace tusk
