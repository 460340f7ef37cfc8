// Kubernetes' side of the node actions, through kubectl (in a pod, its service account; else
// KUBECONFIG, as for any kubectl): each node a run judged gets the label tusk.io/burn-in=pass|fail;
// a failed one also gets the taint tusk.io/burn-in=RUN_ID:NoSchedule and the annotation
// tusk.io/burn-in-fault ("tusk RUN_ID: FAULT"); a passing one loses both. Taints of any other key
// (an operator's, a cordon) are never touched. Each change is a JSON merge patch that carries the
// node's resourceVersion, so a node changed since it was read is refused by the API server, never
// overwritten. deploy/kubernetes/controller-rbac.yaml grants exactly what this uses: nodes list
// (`kubectl get nodes`), get and patch (`kubectl patch` reads the node before it patches).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/actions/report_blame.hpp"

namespace tusk {

inline constexpr const char* kBurnInKey = "tusk.io/burn-in";  // the label's and the taint's
inline constexpr const char* kBurnInFaultAnnotation = "tusk.io/burn-in-fault";

struct KubeNode {
  std::string resource_version;
  std::string result;           // the tusk.io/burn-in label: "pass", "fail" or "" (none)
  std::string fault;            // the tusk.io/burn-in-fault annotation
  bool tainted = false;         // carries the tusk.io/burn-in taint
  nlohmann::json other_taints;  // every other taint, as the API server has it (an array)
};

struct KubePatch {
  std::string node;      // the Kubernetes node's name
  std::string result;    // "pass" or "fail"
  nlohmann::json patch;  // the merge patch
};

struct KubePlan {
  std::vector<KubePatch> patches;
  std::vector<std::string> notes;
  bool capped = false;
};

// `kubectl get nodes -o json`'s NodeList; throws std::runtime_error for one that is not.
std::map<std::string, KubeNode> parse_kube_nodes(const nlohmann::json& list);

// Every node of the cluster, by name; nullopt with `error` set when kubectl fails.
std::optional<std::map<std::string, KubeNode>> read_kube_nodes(std::string& error);

// A run's node (a short hostname) is the Kubernetes node of that name, else the one node whose
// name up to its first dot is that.
KubePlan plan_kube_patches(const RunBlame& blame, const std::map<std::string, KubeNode>& nodes, double max_share);

std::vector<std::string> kubectl_patch_command(const KubePatch& patch);

// Runs it; "" when done, else why not.
std::string take_kube_patch(const KubePatch& patch);

// A label's or taint's value from any text: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends.
std::string kube_label_value(const std::string& text);

}  // namespace tusk
