// What the agents' hosts heard on their ports, read back from a run's report.json (agents[].
// dpdk_ports[].lldp_neighbour): `topology discover --report` draws the host cables from it, the
// ones the switches' LLDP-MIB misses when the hosts themselves send no LLDP.
#pragma once

#include <string>
#include <vector>

#include "controller/verdict/cabling_check.hpp"

namespace tusk {

// The most host ports one report gives: a 16,000-host fabric with 8 ports each, twice over.
inline constexpr std::size_t kMaxReportHostPorts = 256'000;

// Every port with a neighbour; each text lldp_text-bounded (the file is the user's, its texts a
// peer's). Throws std::runtime_error naming the file for a file that cannot be read or is not a
// Tusk report.
std::vector<HostLldp> hosts_lldp_from_report(const std::string& file);
std::vector<HostLldp> hosts_lldp_from_report_text(const std::string& text, const std::string& file);

}  // namespace tusk
