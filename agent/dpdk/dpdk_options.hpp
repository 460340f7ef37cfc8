// The DPDK engine's share of tusk-agent's command line (the DPDK group, `dpdk:` in --config): its
// ports (--dpdk-vdev, --dpdk-pci) with their addresses, EAL and queue settings.
#pragma once

#include <memory>

#include "agent/engine_options.hpp"

namespace tusk::dpdk {

std::unique_ptr<EngineOptions> dpdk_options();

}  // namespace tusk::dpdk
