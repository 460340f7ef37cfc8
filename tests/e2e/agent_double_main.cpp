// TEST ONLY: tusk-agent with the engine double in place of real engines, for the control-plane
// end-to-end tests. Never installed.
#include "agent/agent_app.hpp"
#include "tests/e2e/engine_double.hpp"

int main(int argc, char** argv) {
  tusk::EngineSetup setup;
  setup.make_engines = [](const std::string&) {
    tusk::EngineCatalog engines;
    for (const char* name : {"dpdk", "rdma"}) {
      engines.factories[name] = [] { return std::make_unique<tusk::testing::EngineDouble>(); };
    }
    engines.notes.push_back("TEST BUILD: engines are doubles that move no traffic");
    return engines;
  };
  return tusk::run_agent(argc, argv, setup);
}
