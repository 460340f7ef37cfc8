#include "agent/process_capabilities.hpp"

#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fmt/format.h>

namespace tusk {

const std::vector<NeededCapability>& capabilities_for_ports() {
  static const std::vector<NeededCapability> needed{
      {CAP_NET_RAW, "CAP_NET_RAW", "AF_PACKET sockets, raw queues and path-trace probes"},
      {CAP_NET_ADMIN, "CAP_NET_ADMIN", "a port's MAC, MTU, promiscuous mode and optics; RDMA QPs' own counters"},
  };
  return needed;
}

std::vector<NeededCapability> missing_capabilities(const std::vector<NeededCapability>& needed) {
  // capget(2) itself: libcap's cap_get_proc would be a dependency for these few lines.
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  const bool read = syscall(SYS_capget, &header, data) == 0;
  std::vector<NeededCapability> missing;
  for (const auto& capability : needed) {
    const auto word = static_cast<unsigned>(capability.number) / 32;
    const auto bit = 1u << (static_cast<unsigned>(capability.number) % 32);
    if (!read || word >= _LINUX_CAPABILITY_U32S_3 || (data[word].effective & bit) == 0) missing.push_back(capability);
  }
  return missing;
}

std::string missing_capabilities_note(const std::vector<NeededCapability>& needed) {
  const auto missing = missing_capabilities(needed);
  if (missing.empty()) return {};
  std::string note = "; this process lacks ";
  for (std::size_t i = 0; i < missing.size(); ++i) {
    note += fmt::format("{}{} ({})", i == 0 ? "" : " and ", missing[i].name, missing[i].used_for);
  }
  return note + ", which tusk-agent.service grants";
}

std::string locked_memory_note() {
  rlimit limit{};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return {};
  if (missing_capabilities({{CAP_IPC_LOCK, "CAP_IPC_LOCK", ""}}).empty()) return {};
  return fmt::format("; locked memory is limited to {} KiB (ulimit -l; the systemd unit's LimitMEMLOCK=infinity)",
                     limit.rlim_cur / 1024);
}

}  // namespace tusk
