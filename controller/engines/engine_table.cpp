#include "controller/engines/engine_slice.hpp"

#include <algorithm>

#include "controller/engines/dpdk/dpdk_slice.hpp"
#include "controller/engines/rdma/rdma_slice.hpp"

namespace tusk {

namespace {

std::vector<const EngineSlice*>& table() {
  // The one place that names every built-in engine: adding one is a line here.
  static std::vector<const EngineSlice*> engines{&rdma::slice(), &dpdk::slice()};
  return engines;
}

}  // namespace

const std::vector<const EngineSlice*>& engine_table() {
  return table();
}

void register_engine(const EngineSlice& engine) {
  if (find_engine(engine.name)) {
    throw std::invalid_argument(fmt::format("engine '{}' is registered already", engine.name));
  }
  table().push_back(&engine);
}

void unregister_engine(std::string_view name) {
  auto& engines = table();
  std::erase_if(engines, [name](const EngineSlice* engine) { return engine->name == name; });
}

std::size_t most_streams_of(const proto::Plan& plan) {
  if (const EngineSlice* engine = find_engine(plan.engine()); engine && engine->most_streams) {
    return engine->most_streams(plan);
  }
  constexpr std::size_t kStreamsPerParty = 64;
  return (static_cast<std::size_t>(plan.peers_size()) + static_cast<std::size_t>(plan.senders_size()) + 1) *
         kStreamsPerParty;
}

const EngineSlice* find_engine(std::string_view name) {
  const auto& table = engine_table();
  const auto found =
      std::find_if(table.begin(), table.end(), [name](const EngineSlice* engine) { return engine->name == name; });
  return found == table.end() ? nullptr : *found;
}

}  // namespace tusk
