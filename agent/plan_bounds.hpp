// The checks both engines' plan bounds are made of (agent/rdma/rdma_plan.cpp,
// agent/dpdk/dpdk_plan.cpp): each throws EngineError naming the field, its value and its bound.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <string_view>

#include "agent/engine.hpp"

namespace tusk::plan_bounds {

template <typename Value, typename Bound>
void at_most(std::string_view field, Value value, Bound most) {
  if (value > most) throw EngineError(fmt::format("{} {} is out of range (at most {})", field, value, most));
}

inline void finite_at_least_zero(std::string_view field, double value) {
  if (!std::isfinite(value) || value < 0)
    throw EngineError(fmt::format("{} {} is not a number of 0 or more", field, value));
}

}  // namespace tusk::plan_bounds
