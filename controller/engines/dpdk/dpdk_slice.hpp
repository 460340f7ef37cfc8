// The controller's dpdk engine: see controller/engines/engine_slice.hpp.
#pragma once

#include "controller/engines/engine_slice.hpp"

namespace tusk::dpdk {

const EngineSlice& slice();

}  // namespace tusk::dpdk
