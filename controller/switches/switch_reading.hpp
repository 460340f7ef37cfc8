// What the controller read from one switch over SNMP at one moment: the counters of the ports it
// was asked about (IF-MIB) and the neighbours its LLDP agent knows (LLDP-MIB). Plain data: the run
// outcome keeps the readings taken before and after each test, and every report reads them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tusk {

// A port's counters as IF-MIB counts them: 64-bit (ifXTable) where the switch has them, else the
// 32-bit ifTable's (`wide` false: deltas then wrap at 2^32).
struct SwitchPortCounters {
  std::uint64_t in_octets = 0, in_packets = 0, in_errors = 0, in_discards = 0;
  std::uint64_t out_octets = 0, out_packets = 0, out_errors = 0, out_discards = 0;
  bool wide = true;
  std::optional<bool> oper_up;  // ifOperStatus up(1), when read
};

// One neighbour in the switch's LLDP-MIB remote table, on one of its ports.
struct SwitchLldpNeighbour {
  std::string local_port;  // the switch's own port, by name
  std::string system_name;
  std::string port_id;           // as the neighbour sends it (an interface name, or a MAC as text)
  std::string port_description;  // often the interface name when the port id is a MAC
  std::string chassis_id;
};

struct SwitchReading {
  std::string device;   // as the topology file names it
  std::string address;  // its management address
  std::int64_t time_ns = 0;
  std::string error;  // why the switch could not be read ("" when it was); never fatal to a run
  std::map<std::string, SwitchPortCounters> ports;
  std::vector<std::string> missing_ports;  // asked for, and the switch has no port of that name
  std::vector<SwitchLldpNeighbour> lldp;
  bool lldp_read = false;
  // Each port's IPv4 addresses, dotted, by port name (loopback's 127/8 left out); read when asked.
  std::map<std::string, std::vector<std::string>> port_addresses;
  std::map<std::string, unsigned> prefix_lengths;  // by address, where the switch gives its mask
  std::vector<std::string> warnings;               // a table cut short, and why
  bool ok() const { return error.empty(); }
};

}  // namespace tusk
