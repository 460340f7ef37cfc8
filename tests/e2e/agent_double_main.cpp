// TEST ONLY: tusk-agent with the engine double in place of real engines, for the control-plane
// end-to-end tests. Never installed.
#include <cstdlib>
#include <string>
#include <vector>

#include "agent/agent_app.hpp"
#include "agent/dpdk/send_rate.hpp"
#include "agent/rdma/rdma_engine.hpp"
#include "tests/e2e/engine_double.hpp"

int main(int argc, char** argv) {
  tusk::EngineSetup setup;
  setup.make_engines = [](const std::string&) {
    tusk::EngineCatalog engines;
    // The real engines' safety-cap rates: the agent holds a plan to them before the double is made.
    const std::pair<const char*, tusk::CappedBitRate> names[] = {{"dpdk", tusk::dpdk::capped_bit_rate},
                                                                 {"rdma", tusk::rdma::capped_bit_rate}};
    // TUSK_DOUBLE_KERNEL_PORT=PORT=NETDEV: a port the kernel sees, whose optics the agent reads.
    std::vector<tusk::KernelPort> kernel_ports;
    if (const char* named = std::getenv("TUSK_DOUBLE_KERNEL_PORT")) {
      const std::string text = named;
      if (const auto equals = text.find('='); equals != std::string::npos) {
        kernel_ports.push_back({text.substr(0, equals), text.substr(equals + 1), ""});
      }
    }
    for (const auto& [name, rate] : names) {
      engines.engines[name] = {[] { return std::make_unique<tusk::testing::EngineDouble>(); }, rate, kernel_ports};
    }
    engines.notes.push_back("TEST BUILD: engines are doubles that move no traffic");
    if (std::getenv("TUSK_DOUBLE_HOSTILE_TEXT")) {
      // What a hostile agent says of itself: a note that ends the operator's line and writes a
      // verdict of its own, with an escape sequence that clears the screen.
      engines.notes.push_back("fine\n2026-01-01T00:00:00.000 tusk-controller info: all agents can run tests\x1b[2J");
    }
    return engines;
  };
  return tusk::run_agent(argc, argv, setup);
}
