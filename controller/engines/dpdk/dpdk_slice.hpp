// The controller's dpdk engine: see controller/engines/engine_slice.hpp.
#pragma once

#include "controller/engines/engine_slice.hpp"

namespace tusk::dpdk {

const EngineSlice& slice();

// A dpdk test's parameters, as its keys and checks resolved them (throws std::logic_error for a
// test of another engine); the non-const form makes them for a test that has none yet.
const proto::DpdkTest& params(const TestSpec& spec);
proto::DpdkTest& params(TestSpec& spec);

}  // namespace tusk::dpdk
