// What RDMA hardware this host has, through libibverbs: devices, ports and their GID tables.
#pragma once

#include <string>
#include <vector>

#include "tusk.pb.h"

namespace tusk::rdma {

// Never throws: a device that cannot be opened or queried is skipped and the reason appended to
// `notes`, so one bad device does not hide the others.
std::vector<proto::RdmaDevice> discover_devices(std::vector<std::string>& notes);

}  // namespace tusk::rdma
