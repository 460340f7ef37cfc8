// The shipped tusk-agent. Engines are added here as they are built (issues: DPDK, RDMA).
#include "agent/agent_app.hpp"

int main(int argc, char** argv) {
  tusk::EngineCatalog engines;
  engines.notes.push_back("dpdk engine: not built into this version yet");
  engines.notes.push_back("rdma engine: not built into this version yet");
  return tusk::run_agent(argc, argv, std::move(engines));
}
