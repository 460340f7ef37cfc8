// What RDMA hardware this host has, through libibverbs: devices, ports and their GID tables.
#pragma once

#include <string>
#include <vector>

#include "tusk.pb.h"

union ibv_gid;
struct ibv_port_attr;

namespace tusk::rdma {

struct Discovery {
  std::vector<proto::RdmaDevice> devices;
  std::vector<std::string> notes;  // why a device, port or GID table is missing
};

// A GID as IPv6 text ("fe80::...", "::ffff:192.168.1.11"), as ibv_devinfo and rdma_cm show it.
std::string gid_text(const ibv_gid& gid);

// A port's speed in Gbit/s (its lanes' speed times their number); 0 where the driver does not say.
double port_speed_gbps(const ibv_port_attr& port);

// Never throws: a device that cannot be opened or queried is skipped and the reason noted, so one
// bad device does not hide the others.
Discovery discover_devices();

// Keeps only the devices named in `allowed` (--rdma-device), in its order (a test's rails are the
// agent's devices in this order), noting each name found nowhere with the devices there are; an
// empty `allowed` keeps every device, as the host lists them.
void keep_allowed_devices(Discovery& discovery, const std::vector<std::string>& allowed);

}  // namespace tusk::rdma
