// `tusk-controller inventory`: waits for agents and shows what each has and holds its plans to.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "controller/command_flags.hpp"

namespace tusk {

// Waits for agents and shows what they have: a check of the control plane and of each host's
// NICs before anything runs.
int command_inventory(ControlPlaneFlags& control, std::uint32_t expect, const std::string& wait_text,
                      const std::string& json_path);

}  // namespace tusk
