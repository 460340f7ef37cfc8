// The shipped tusk-agent, with the engines this version has: the agent's engine table. Each
// engine's flags, host checks and registration are its own (EngineOptions, beside its code).
#include <memory>
#include <vector>

#include "agent/agent_app.hpp"
#include "agent/dpdk/dpdk_options.hpp"
#include "agent/engine_options.hpp"
#include "agent/rdma/rdma_options.hpp"

int main(int argc, char** argv) {
  std::vector<std::unique_ptr<tusk::EngineOptions>> engines;
  engines.push_back(tusk::dpdk::dpdk_options());
  engines.push_back(tusk::rdma::rdma_options());
  return tusk::run_agent(argc, argv, tusk::engine_setup(std::move(engines)));
}
