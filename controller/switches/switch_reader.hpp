// Reads one switch: its port names (IF-MIB ifName, else ifDescr), the counters of the ports asked
// for, its LLDP neighbours and its ports' addresses (IP-MIB), within a deadline and a cap on every table (a switch that
// answers with a huge table or never answers costs bounded time and memory).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "controller/switches/snmp_session.hpp"
#include "controller/switches/switch_reading.hpp"

namespace tusk {

struct SwitchQuery {
  SnmpTarget target;
  std::vector<std::string> ports;  // by name, as the topology file's interfaces
  bool lldp = false;
  bool addresses = false;  // each port's IPv4 addresses (IP-MIB), for topology discover
};

// The same queries without the LLDP tables: a test's evidence is its ports' counters, and only
// the cabling check needs the neighbours.
inline std::vector<SwitchQuery> counters_only(std::vector<SwitchQuery> queries) {
  for (auto& query : queries) query.lldp = false;
  return queries;
}

struct SwitchReadLimits {
  std::size_t max_rows = 8192;                // values in one table walk: ports of the largest chassis, many times over
  std::chrono::milliseconds deadline{15000};  // for the whole switch
};

// Never throws for what the switch does: an unreachable or refusing switch gives a reading with
// `error` set.
SwitchReading read_switch(const SwitchQuery& query, const SwitchReadLimits& limits = {});

}  // namespace tusk
