#include "agent/rdma/port_state.hpp"

#include <fstream>

namespace tusk::rdma {

std::optional<bool> read_port_active(const std::string& device, std::uint32_t port,
                                     const std::filesystem::path& sysfs_root) {
  std::ifstream file(sysfs_root / "class/infiniband" / device / "ports" / std::to_string(port) / "state");
  int state = -1;
  if (!(file >> state)) return std::nullopt;
  // enum ib_port_state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER.
  if (state < 1 || state > 5) return std::nullopt;
  return state == 4 || state == 5;
}

}  // namespace tusk::rdma
