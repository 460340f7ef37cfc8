// tusk-agent's program: options, then the session with the controller until SIGINT/SIGTERM.
// The engines are passed in, so the shipped binary and test binaries share every other line.
#pragma once

#include <functional>
#include <optional>

#include "agent/engine.hpp"

namespace CLI {
class App;
}

namespace tusk {

// The engines a binary brings: their command-line flags, and how to build them once parsed.
struct EngineSetup {
  std::function<void(CLI::App&)> add_options;
  std::function<EngineCatalog(const std::string& agent_name)> make_engines;
  // For --check-config: what the engines' options name that this host lacks (a PCI device, an
  // interface, an RDMA device), one line each; empty when all is there.
  std::function<std::vector<std::string>()> check_host;
  // For --check-config: why this agent could run no test here (no engine has a port or device to
  // use), or nullopt. A valid configuration that runs nothing exits 1, not 0.
  std::function<std::optional<std::string>()> no_engine;
};

// Returns the process exit code.
int run_agent(int argc, char** argv, const EngineSetup& setup);

}  // namespace tusk
