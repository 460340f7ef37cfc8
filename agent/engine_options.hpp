// An engine's share of tusk-agent's command line: its flags (and so its --config keys), what
// --check-config asks of the host for them, and its registration once they are parsed. Each engine
// keeps its own beside its code (agent/dpdk/dpdk_options, agent/rdma/rdma_options); main.cpp lists
// them, and engine_setup makes run_agent's EngineSetup of the list, so adding an engine touches no
// shared file but that list.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_app.hpp"
#include "agent/engine.hpp"

namespace tusk {

// What every engine is built with, whatever its own flags.
struct EngineContext {
  std::string agent_name;
  unsigned idle_sleep_us = 0;  // --idle-sleep-us: sleep when a poll finds nothing (labs on few cores)
};

class EngineOptions {
 public:
  virtual ~EngineOptions() = default;
  // Its flags, in a group of its own.
  virtual void add_to(CLI::App& app) = 0;
  // What its flags name that this host lacks (a PCI device, an interface, a device), one line each.
  virtual std::vector<std::string> host_problems() const = 0;
  // Why it has nothing to test here ("it names no DPDK port …"), or nullopt when it has.
  virtual std::optional<std::string> unused() const = 0;
  // Registers the engine (or a note of why not) once the flags are parsed.
  virtual void add_engine(EngineCatalog& catalog, const EngineContext& context) = 0;
};

// run_agent's EngineSetup from the engines' options, in their order; adds --idle-sleep-us, which
// every engine takes.
EngineSetup engine_setup(std::vector<std::unique_ptr<EngineOptions>> engines);

}  // namespace tusk
