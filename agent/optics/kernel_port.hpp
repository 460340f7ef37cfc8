// KernelPort, in optics/ because the optics reader is below the engines that name such ports.
#pragma once

#include <string>

namespace tusk {

// A port an engine tests that the kernel also sees (af_packet's interface, a RoCE NIC's netdev):
// the agent reads its optics and FEC counters with ethtool (agent/optics/port_optics_reading.hpp).
struct KernelPort {
  std::string port;     // as the engine names it: a DPDK port, an RDMA device and port "mlx5_0/1"
  std::string netdev;   // the kernel's name for it
  std::string address;  // its data-plane IPv4 address ("" if none): where a topology file places it
};

}  // namespace tusk
