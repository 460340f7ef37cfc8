// tusk-agent's program: options, then the session with the controller until SIGINT/SIGTERM.
// The engines are passed in, so the shipped binary and test binaries share every other line.
#pragma once

#include "agent/engine.hpp"

namespace tusk {

// Returns the process exit code.
int run_agent(int argc, char** argv, EngineCatalog engines);

}  // namespace tusk
