#include "controller/plan/check_loads.hpp"

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "controller/engines/engine_slice.hpp"

namespace tusk {

nlohmann::json inventory_file_json(const proto::Inventory& inventory) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string text;
  if (!google::protobuf::util::MessageToJsonString(inventory, &text, options).ok()) {
    throw std::runtime_error("cannot render an inventory as JSON");
  }
  return nlohmann::json::parse(text);
}

std::map<std::string, proto::Inventory> read_inventory_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error(fmt::format("{}: cannot read the file", path));
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(file);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(fmt::format("{}: not JSON ({})", path, e.what()));
  }
  if (!document.is_object() || !document.contains("agents") || !document["agents"].is_array()) {
    throw std::runtime_error(fmt::format(
        "{}: agents: missing or not a list (write the file with `tusk-controller inventory --json`)", path));
  }
  std::map<std::string, proto::Inventory> inventories;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // a newer agent's fields
  const auto& agents = document["agents"];
  for (std::size_t i = 0; i < agents.size(); ++i) {
    const auto& agent = agents[i];
    if (!agent.is_object() || !agent.contains("name") || !agent["name"].is_string() ||
        agent["name"].get<std::string>().empty()) {
      throw std::runtime_error(fmt::format("{}: agents[{}].name: missing or not a text", path, i));
    }
    const std::string name = agent["name"];
    if (!agent.contains("inventory") || !agent["inventory"].is_object()) {
      throw std::runtime_error(
          fmt::format("{}: agents[{}].inventory: missing (agent '{}'; an inventory file from before Tusk wrote it?)",
                      path, i, name));
    }
    proto::Inventory inventory;
    if (const auto status = google::protobuf::util::JsonStringToMessage(agent["inventory"].dump(), &inventory, options);
        !status.ok()) {
      throw std::runtime_error(
          fmt::format("{}: agents[{}].inventory: {} (agent '{}')", path, i, std::string(status.message()), name));
    }
    if (!inventories.emplace(name, std::move(inventory)).second) {
      throw std::runtime_error(fmt::format("{}: agents[{}].name: '{}' is there twice", path, i, name));
    }
  }
  return inventories;
}

std::vector<CheckLoadWarning> check_loads(const std::vector<std::vector<AgentPlan>>& tests,
                                          const std::map<std::string, proto::Inventory>& inventories) {
  std::vector<CheckLoadWarning> warnings;
  for (std::size_t t = 0; t < tests.size(); ++t) {
    std::map<std::string, const proto::Plan*> test_plans;
    for (const auto& agent_plan : tests[t]) test_plans.emplace(agent_plan.agent, &agent_plan.plan);
    for (const auto& agent_plan : tests[t]) {
      const auto inventory = inventories.find(agent_plan.agent);
      const EngineSlice* engine = find_engine(agent_plan.plan.engine());
      if (inventory == inventories.end() || engine == nullptr || engine->check_load == nullptr) continue;
      if (std::string text = engine->check_load(agent_plan.plan, inventory->second, test_plans); !text.empty()) {
        warnings.push_back({t, agent_plan.agent, std::move(text)});
      }
    }
  }
  return warnings;
}

}  // namespace tusk
