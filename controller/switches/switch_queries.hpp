// Which switches a run reads, and how: every device of the topology file with a management
// address, its credentials from the credentials file, and the ports the file cables.
#pragma once

#include <vector>

#include "controller/switches/snmp_credentials.hpp"
#include "controller/switches/switch_reader.hpp"
#include "controller/topology/fabric_topology.hpp"

namespace tusk {

// Throws TopologyFileInvalid naming (file:line: field) each management.snmp that names no entry of
// `credentials` (from `credentials_file`), so nothing starts.
std::vector<SwitchQuery> switch_queries(const FabricTopology& topology, const SnmpCredentials& credentials,
                                        const std::string& credentials_file);

}  // namespace tusk
