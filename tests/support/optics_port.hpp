// A port's optics as an agent sends them, for the controller's tests: a module at a temperature,
// so that a profile's max_module_temp_c fails or passes it.
#pragma once

#include <string>

#include "common/optics_reading.hpp"
#include "common/optics_wire.hpp"
#include "tusk.pb.h"

namespace tusk::testing {

inline proto::PortOptics port_at_temperature(const std::string& port, double celsius,
                                             std::uint64_t interval_ns = 1'000'000'000) {
  proto::PortOptics out;
  out.set_port(port);
  out.set_netdev("eth-" + port);
  ModuleReading module;
  module.status = ModuleStatus::diagnostics;
  module.temperature_c = celsius;
  to_proto(module, *out.mutable_module());
  out.set_interval_ns(interval_ns);
  return out;
}

}  // namespace tusk::testing
