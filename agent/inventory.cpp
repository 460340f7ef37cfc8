#include "agent/inventory.hpp"

#include <unistd.h>

#include "common/version.hpp"

namespace tusk {

proto::Inventory collect_inventory(const std::string& agent_name, const std::vector<std::string>& dpdk_ports,
                                   const EngineCatalog& engines) {
  proto::Inventory inventory;
  char host[256] = {};
  inventory.set_hostname(gethostname(host, sizeof(host) - 1) == 0 ? host : agent_name);
  inventory.set_agent_version(kTuskVersion);

  std::vector<std::string> notes;
  for (const auto& device : engines.rdma_devices) *inventory.add_rdma_devices() = device;
  if (inventory.rdma_devices_size() == 0) notes.push_back("no RDMA device found on this host");
  for (const auto& port : engines.dpdk_ports) *inventory.add_dpdk_ports() = port;
  if (engines.dpdk_ports.empty()) {
    for (const auto& port : dpdk_ports) inventory.add_dpdk_ports()->set_name(port);
  }
  for (const auto& [name, engine] : engines.engines) inventory.add_engines(name);
  notes.insert(notes.end(), engines.notes.begin(), engines.notes.end());
  for (auto& note : notes) inventory.add_notes(std::move(note));
  return inventory;
}

}  // namespace tusk
