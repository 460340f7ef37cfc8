// The controller's rdma engine: see controller/engines/engine_slice.hpp.
#pragma once

#include "controller/engines/engine_slice.hpp"

namespace tusk::rdma {

const EngineSlice& slice();

}  // namespace tusk::rdma
