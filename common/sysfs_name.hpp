// A name (an RDMA device, a network interface, from the user or from sysfs) before it becomes part
// of a /sys path: one that is empty, "." or "..", or holds a '/', would read another directory.
#pragma once

#include <string>

namespace tusk {

inline bool is_one_path_component(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

}  // namespace tusk
