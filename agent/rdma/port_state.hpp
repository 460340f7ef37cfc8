// An RDMA port's logical state as the driver reports it in sysfs
// (<root>/class/infiniband/<dev>/ports/<port>/state, "4: ACTIVE"): rxe's follows its netdev's
// link, a NIC's its PHY and the subnet. Read every few milliseconds while a test runs, so it opens,
// reads and closes one small file and nothing else.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace tusk::rdma {

// Whether the port is ACTIVE (or ACTIVE_DEFER), or none when the file cannot be read or parsed.
std::optional<bool> read_port_active(const std::string& device, std::uint32_t port,
                                     const std::filesystem::path& sysfs_root = "/sys");

}  // namespace tusk::rdma
