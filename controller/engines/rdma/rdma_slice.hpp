// The controller's rdma engine: see controller/engines/engine_slice.hpp.
#pragma once

#include "controller/engines/engine_slice.hpp"

namespace tusk::rdma {

const EngineSlice& slice();

// A rdma test's parameters, as its keys and checks resolved them (throws std::logic_error for a
// test of another engine); the non-const form makes them for a test that has none yet.
const proto::RdmaTest& params(const TestSpec& spec);
proto::RdmaTest& params(TestSpec& spec);

}  // namespace tusk::rdma
