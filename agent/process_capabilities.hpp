// The capabilities the agent's engines need to open their ports, and which of them this process
// lacks: a DPDK port that fails with "Operation not permitted" or "No such device" says which
// capability is missing instead (deploy/systemd/tusk-agent.service grants exactly these).
#pragma once

#include <string>
#include <vector>

namespace tusk {

struct NeededCapability {
  int number;            // CAP_NET_RAW, ...
  const char* name;      // "CAP_NET_RAW"
  const char* used_for;  // what fails without it
};

// The engines' capabilities, in the unit's order.
const std::vector<NeededCapability>& capabilities_for_ports();

// Those of `needed` not in this process's effective set (all of them when it cannot be read).
std::vector<NeededCapability> missing_capabilities(const std::vector<NeededCapability>& needed);

// "; locked memory is limited to 8192 KiB (...)" where the memlock limit is finite and this process
// lacks CAP_IPC_LOCK, else "": net_af_packet maps its rings locked, verbs pin their buffers.
std::string locked_memory_note();

// "; this process lacks CAP_NET_RAW (AF_PACKET sockets, ...)", or "" when none is missing: to
// follow an error that a missing capability may have caused.
std::string missing_capabilities_note(const std::vector<NeededCapability>& needed);

}  // namespace tusk
