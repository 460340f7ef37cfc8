// Which build a binary is: the line `--version` prints and packages and bug reports quote.
#pragma once

#include <string>
#include <string_view>

namespace tusk {

// "tusk-agent 0.1.0 (git 508c8a1f2c3d)"
std::string version_line(std::string_view program);

}  // namespace tusk
