// What `topology discover --report` reads from a run's report.json: what the agents' hosts heard
// over LLDP on their ports (agents[].dpdk_ports[].lldp_neighbour, agents[].rdma_devices[].ports[].
// lldp_neighbour), the host cables the switches' LLDP-MIB misses when the hosts send no LLDP; and
// each flow's traced path (tests[].localisation.flows[]), which places the addresses of switches
// nobody could read.
#pragma once

#include <string>
#include <vector>

#include "controller/switches/host_lldp.hpp"
#include "controller/switches/traced_hop_places.hpp"

namespace tusk {

// The most host ports one report gives: a 16,000-host fabric with 8 ports each, twice over.
inline constexpr std::size_t kMaxReportHostPorts = 256'000;
// The most traced paths one report gives (each test's flows together), and hops one path.
inline constexpr std::size_t kMaxReportPaths = 1'000'000;
inline constexpr std::size_t kMaxReportPathHops = 64;

struct ReportEvidence {
  std::vector<HostLldp> hosts;    // every port with a neighbour
  std::vector<TracedPath> paths;  // every flow with a source, a destination and a hop that answered
};

// Each text lldp_text-bounded (the file is the user's, its texts a peer's); an address that is not
// a dotted IPv4 address is no address. Throws std::runtime_error naming the file for a file that
// cannot be read or is not a Tusk report, or one past the bounds above.
ReportEvidence report_evidence(const std::string& file);
ReportEvidence report_evidence_text(const std::string& text, const std::string& file);

}  // namespace tusk
