#include "controller/actions/kube_nodes.hpp"

#include <fmt/format.h>

#include <cctype>
#include <chrono>
#include <stdexcept>

#include "common/command_output.hpp"
#include "common/json_text.hpp"
#include "common/printable.hpp"
#include "controller/actions/node_actions.hpp"

namespace tusk {
namespace {

// The API server answers within seconds; kubectl lists a large cluster in pages of 500.
constexpr std::chrono::milliseconds kListTimeout{120'000};
constexpr std::chrono::milliseconds kPatchTimeout{30'000};
// `get nodes -o json` of 25,000 nodes of 20 kB each (their image lists are most of it).
constexpr std::size_t kMaxListBytes = 512u * 1024 * 1024;
constexpr std::size_t kMaxLabelValue = 63;

// The node's name up to its first dot.
std::string short_name(const std::string& name) {
  return name.substr(0, name.find('.'));
}

nlohmann::json burn_in_taint(const std::string& run_id) {
  return {{"key", kBurnInKey}, {"value", kube_label_value(run_id)}, {"effect", "NoSchedule"}};
}

}  // namespace

std::string kube_label_value(const std::string& text) {
  std::string value;
  for (const char c : text) {
    if (value.size() == kMaxLabelValue) break;
    const bool allowed = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
    value += allowed && static_cast<unsigned char>(c) < 0x80 ? c : '-';
  }
  const auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  while (!value.empty() && !alnum(value.back())) value.pop_back();
  std::size_t first = 0;
  while (first < value.size() && !alnum(value[first])) ++first;
  return value.substr(first);
}

std::map<std::string, KubeNode> parse_kube_nodes(const nlohmann::json& list) {
  const auto items = list.is_object() ? list.find("items") : list.end();
  if (items == list.end() || !items->is_array()) {
    throw std::runtime_error("kubectl get nodes: not a NodeList (no items)");
  }
  std::map<std::string, KubeNode> nodes;
  for (const auto& item : *items) {
    if (!item.is_object() || !item.contains("metadata") || !item["metadata"].is_object()) continue;
    const auto& metadata = item["metadata"];
    const std::string name = string_member(metadata, "name");
    if (name.empty()) continue;
    KubeNode node;
    node.resource_version = string_member(metadata, "resourceVersion");
    if (const auto labels = metadata.find("labels"); labels != metadata.end() && labels->is_object()) {
      node.result = string_member(*labels, kBurnInKey);
    }
    if (const auto notes = metadata.find("annotations"); notes != metadata.end() && notes->is_object()) {
      node.fault = string_member(*notes, kBurnInFaultAnnotation);
    }
    node.other_taints = nlohmann::json::array();
    if (const auto spec = item.find("spec"); spec != item.end() && spec->is_object()) {
      if (const auto taints = spec->find("taints"); taints != spec->end() && taints->is_array()) {
        for (const auto& taint : *taints) {
          if (taint.is_object() && string_member(taint, "key") == kBurnInKey) {
            node.tainted = true;
          } else {
            node.other_taints.push_back(taint);
          }
        }
      }
    }
    nodes.emplace(name, std::move(node));
  }
  return nodes;
}

std::optional<std::map<std::string, KubeNode>> read_kube_nodes(std::string& error) {
  const CommandOutput get = run_command({"kubectl", "get", "nodes", "--output=json"}, kListTimeout, kMaxListBytes);
  if (!get.ok() || get.truncated) {
    error = get.ok() ? "kubectl get nodes: more output than a cluster has nodes" : get.failure("kubectl");
    return std::nullopt;
  }
  try {
    return parse_kube_nodes(nlohmann::json::parse(get.out));
  } catch (const std::exception& e) {
    error = fmt::format("kubectl get nodes: {}", e.what());
    return std::nullopt;
  }
}

KubePlan plan_kube_patches(const RunBlame& blame, const std::map<std::string, KubeNode>& nodes, double max_share) {
  KubePlan plan;
  if (auto held = hold_back(blame, max_share)) {
    plan.capped = held->capped;
    plan.notes.push_back(std::move(held->note));
    return plan;
  }
  // Short name -> the one Kubernetes node it names ("" when several do).
  std::map<std::string, std::string> by_short_name;
  for (const auto& [name, node] : nodes) {
    const auto [at, added] = by_short_name.emplace(short_name(name), name);
    if (!added) at->second.clear();
  }
  const auto find = [&](const std::string& run_node) -> const std::pair<const std::string, KubeNode>* {
    if (const auto exact = nodes.find(run_node); exact != nodes.end()) return &*exact;
    const auto by_short = by_short_name.find(run_node);
    if (by_short == by_short_name.end() || by_short->second.empty()) return nullptr;
    return &*nodes.find(by_short->second);
  };
  for (const auto& [run_node, fault] : blame.faults) {
    const auto* found = find(run_node);
    if (found == nullptr) {
      plan.notes.push_back(fmt::format("{}: blamed ({}), but Kubernetes has no such node", run_node, fault));
      continue;
    }
    const auto& [name, node] = *found;
    nlohmann::json taints = node.other_taints;
    taints.push_back(burn_in_taint(blame.run_id));
    plan.patches.push_back({name,
                            "fail",
                            {{"metadata",
                              {{"resourceVersion", node.resource_version},
                               {"labels", {{kBurnInKey, "fail"}}},
                               {"annotations", {{kBurnInFaultAnnotation, tusk_reason(blame.run_id, fault)}}}}},
                             {"spec", {{"taints", std::move(taints)}}}}});
  }
  for (const auto& run_node : blame.passed) {
    const auto* found = find(run_node);
    if (found == nullptr) {
      plan.notes.push_back(fmt::format("{}: passed, but Kubernetes has no such node", run_node));
      continue;
    }
    const auto& [name, node] = *found;
    if (node.result == "pass" && !node.tainted && node.fault.empty()) continue;  // as it should be
    nlohmann::json patch = {{"metadata",
                             {{"resourceVersion", node.resource_version},
                              {"labels", {{kBurnInKey, "pass"}}},
                              {"annotations", {{kBurnInFaultAnnotation, nullptr}}}}}};
    if (node.tainted) patch["spec"] = {{"taints", node.other_taints}};
    plan.patches.push_back({name, "pass", std::move(patch)});
  }
  for (const auto& link : blame.network) {
    plan.notes.push_back(fmt::format("{}: a suspect link between switches, for the network team", link));
  }
  return plan;
}

std::vector<std::string> kubectl_patch_command(const KubePatch& patch) {
  // Replacing, never throwing, on bytes that are not UTF-8: one bad text must not abort the rest.
  return {"kubectl",      "patch",
          "node",         patch.node,
          "--type=merge", "--patch=" + patch.patch.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

std::string take_kube_patch(const KubePatch& patch) {
  const CommandOutput done = run_command(kubectl_patch_command(patch), kPatchTimeout, 64 * 1024);
  return done.ok() ? std::string() : done.failure("kubectl");
}

}  // namespace tusk
