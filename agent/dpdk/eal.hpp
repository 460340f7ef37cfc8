// DPDK's Environment Abstraction Layer, initialised once per process and cleaned up on
// destruction. Owns nothing else: ports and mempools are separate owners that must be destroyed
// before the Eal (declare the Eal first).
#pragma once

#include <string>
#include <vector>

namespace tusk::dpdk {

struct EalOptions {
  std::vector<std::string> vdevs;      // e.g. "net_af_packet0,iface=lab0"
  std::vector<std::string> allow_pci;  // e.g. "0000:3b:00.0"; empty with vdevs means --no-pci
  std::string lcores = "0";
  bool use_hugepages = false;  // false: --no-huge with `memory_mb` of ordinary memory
  std::string huge_dir;        // a hugetlbfs mount the agent may write (--huge-dir); "": EAL's choice
  unsigned memory_mb = 256;
  std::string file_prefix = "tusk";  // each DPDK process on a host needs its own
};

class Eal {
 public:
  // Throws EngineError naming the EAL arguments and rte_errno's text.
  explicit Eal(const EalOptions& options);
  ~Eal();
  Eal(const Eal&) = delete;
  Eal& operator=(const Eal&) = delete;

  const std::vector<std::string>& arguments() const { return arguments_; }

 private:
  std::vector<std::string> arguments_;
};

std::vector<std::string> eal_arguments(const EalOptions& options);

}  // namespace tusk::dpdk
