#include "controller/engines/engine_slice.hpp"

#include <algorithm>

#include "controller/engines/dpdk/dpdk_slice.hpp"
#include "controller/engines/rdma/rdma_slice.hpp"

namespace tusk {

const std::vector<const EngineSlice*>& engine_table() {
  // The one place that names every engine: adding one is a line here.
  static const std::vector<const EngineSlice*> table{&rdma::slice(), &dpdk::slice()};
  return table;
}

const EngineSlice* find_engine(std::string_view name) {
  const auto& table = engine_table();
  const auto found =
      std::find_if(table.begin(), table.end(), [name](const EngineSlice* engine) { return engine->name == name; });
  return found == table.end() ? nullptr : *found;
}

}  // namespace tusk
