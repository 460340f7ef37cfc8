// The RDMA engine's share of tusk-agent's command line (the RDMA group, `rdma:` in --config):
// which of the host's RDMA devices it offers.
#pragma once

#include <memory>

#include "agent/engine_options.hpp"

namespace tusk::rdma {

std::unique_ptr<EngineOptions> rdma_options();

}  // namespace tusk::rdma
