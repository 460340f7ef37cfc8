// What RDMA hardware this host has, through libibverbs: devices, ports and their GID tables.
#pragma once

#include <string>
#include <vector>

#include "tusk.pb.h"

namespace tusk::rdma {

struct Discovery {
  std::vector<proto::RdmaDevice> devices;
  std::vector<std::string> notes;  // why a device, port or GID table is missing
};

// Never throws: a device that cannot be opened or queried is skipped and the reason noted, so one
// bad device does not hide the others.
Discovery discover_devices();

}  // namespace tusk::rdma
