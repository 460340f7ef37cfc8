// tusk-agent.service's user as a lab test can be it: not root, in no group, with exactly the
// capabilities the unit grants (read from deploy/systemd/tusk-agent.service, so the lab proves
// the unit's list, not a copy of it), and no way to gain more. The unit's user _tusk need not
// exist on the test host: a uid no account has stands in for it.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/build_paths.hpp"

namespace tusk::testing {

inline constexpr uid_t kUnitUserStandIn = 64123;

// "CAP_NET_RAW", ... as the unit's AmbientCapabilities= names them; empty when the file has none.
inline std::vector<std::string> unit_capabilities() {
  std::ifstream unit(tusk::build_paths::source_dir() + "/deploy/systemd/tusk-agent.service");
  std::vector<std::string> capabilities;
  for (std::string line; std::getline(unit, line);) {
    const std::string key = "AmbientCapabilities=";
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream words(line.substr(key.size()));
    for (std::string word; words >> word;) capabilities.push_back(word);
  }
  return capabilities;
}

// The unit's LimitMEMLOCK=infinity for this process and its children; false where it may not be
// lifted (a container without CAP_SYS_RESOURCE, as this project's build machine is).
inline bool lift_memlock_limit() {
  const rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
  return ::setrlimit(RLIMIT_MEMLOCK, &unlimited) == 0;
}

// The command line prefix that runs a program as the stand-in user with `capabilities` (each
// "CAP_X" as the unit writes it): setpriv with them ambient, inheritable and bounding, nothing
// else, no new privileges, and DPDK's runtime directory (XDG_RUNTIME_DIR, as the unit sets it)
// in `runtime_dir`, which is made the user's. `memlock_unlimited`: the caller gives the program
// the unit's LimitMEMLOCK=infinity; where it cannot, CAP_IPC_LOCK stands in for it (locked
// memory unbounded either way: net_af_packet maps its rings MAP_LOCKED, verbs pin their MRs).
inline std::vector<std::string> as_unit_user(const std::vector<std::string>& capabilities,
                                             const std::string& runtime_dir, bool memlock_unlimited) {
  std::string set = "-all";
  for (const auto& capability : capabilities) {
    std::string name = capability.rfind("CAP_", 0) == 0 ? capability.substr(4) : capability;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    set += ",+" + name;
  }
  if (!memlock_unlimited) set += ",+ipc_lock";
  std::filesystem::create_directories(runtime_dir);
  if (::chown(runtime_dir.c_str(), kUnitUserStandIn, kUnitUserStandIn) != 0) return {};
  const std::string id = std::to_string(kUnitUserStandIn);
  return {"/usr/bin/env",          "XDG_RUNTIME_DIR=" + runtime_dir,
          "/usr/bin/setpriv",      "--reuid=" + id,
          "--regid=" + id,         "--clear-groups",
          "--no-new-privs",        "--inh-caps=" + set,
          "--ambient-caps=" + set, "--bounding-set=" + set};
}

// Gives the stand-in user `dir` and everything in it (certificates, keys): the unit's user reads
// its key as its own.
inline bool give_to_unit_user(const std::string& dir) {
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (::chown(it->path().c_str(), kUnitUserStandIn, kUnitUserStandIn) != 0) return false;
  }
  return !error && ::chown(dir.c_str(), kUnitUserStandIn, kUnitUserStandIn) == 0;
}

}  // namespace tusk::testing
