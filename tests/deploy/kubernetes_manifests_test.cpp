// deploy/kubernetes/ as a reviewer reads it, without a cluster (Debian 12 packages no Kubernetes
// schema validator): every document is an object of a known kind and apiVersion in the tusk
// namespace; every volume, ConfigMap, Secret, claim and $(VAR) a pod names exists; the agent
// DaemonSet is host-networked with cluster DNS, names each agent after its node and loads its
// config file; hugepages come with equal memory requests and limits; the Service reaches the
// controller Job's pod on the port agents dial; kustomization.yaml lists every manifest; and the
// profile and agent config in the ConfigMaps pass the real `tusk-controller validate` and
// `tusk-agent --check-config`.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/process.hpp"
#include "tests/support/build_paths.hpp"

namespace fs = std::filesystem;
using tusk::testing::Process;

namespace {

const fs::path kDir = fs::path(tusk::build_paths::source_dir()) / "deploy" / "kubernetes";
const std::string kNamespace = "tusk";
// Secrets the user creates (they hold keys, so they are not in the manifests); each must be
// documented in the manifests by the command that creates it.
const std::set<std::string> kUserSecrets = {"tusk-controller-tls"};

// node[k1][k2]...: the node, or an undefined one (false in a test) when any key is missing.
// yaml-cpp throws on indexing a missing key's node again, so chains go through this.
YAML::Node dig(const YAML::Node& node, std::initializer_list<std::string> path) {
  YAML::Node current;
  current.reset(node);
  for (const auto& key : path) {
    const YAML::Node& here = current;
    if (!here || !here.IsMap() || !here[key]) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node next = here[key];
    current.reset(next);
  }
  return current;
}

struct Doc {
  std::string where;  // file#index, for messages
  YAML::Node node;
  std::string kind() const { return node["kind"].as<std::string>(""); }
  std::string name() const { return dig(node, {"metadata", "name"}).as<std::string>(""); }
};

// The kinds these manifests may use, with their apiVersion and whether they are namespaced.
struct KindInfo {
  std::string api_version;
  bool namespaced;
};
const std::map<std::string, KindInfo> kKinds = {
    {"Namespace", {"v1", false}},
    {"ConfigMap", {"v1", true}},
    {"Secret", {"v1", true}},
    {"Service", {"v1", true}},
    {"ServiceAccount", {"v1", true}},
    {"PersistentVolumeClaim", {"v1", true}},
    {"Pod", {"v1", true}},
    {"DaemonSet", {"apps/v1", true}},
    {"Deployment", {"apps/v1", true}},
    {"Job", {"batch/v1", true}},
    {"PriorityClass", {"scheduling.k8s.io/v1", false}},
    {"ClusterRole", {"rbac.authorization.k8s.io/v1", false}},
    {"ClusterRoleBinding", {"rbac.authorization.k8s.io/v1", false}},
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<fs::path> manifest_files(bool recursive) {
  std::vector<fs::path> files;
  const auto take = [&](const fs::directory_entry& entry) {
    if (entry.is_regular_file() && (entry.path().extension() == ".yaml" || entry.path().extension() == ".yml") &&
        entry.path().filename() != "kustomization.yaml") {
      files.push_back(entry.path());
    }
  };
  if (recursive) {
    for (const auto& entry : fs::recursive_directory_iterator(kDir)) take(entry);
  } else {
    for (const auto& entry : fs::directory_iterator(kDir)) take(entry);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Every document of every manifest (kustomization.yaml aside), parsed; a file that does not parse
// fails the test that asked.
std::vector<Doc> load_docs() {
  std::vector<Doc> docs;
  for (const auto& file : manifest_files(true)) {
    const auto nodes = YAML::LoadAllFromFile(file.string());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].IsNull()) continue;  // a trailing `---`
      docs.push_back({fs::relative(file, kDir).string() + "#" + std::to_string(i), nodes[i]});
    }
  }
  return docs;
}

const Doc* find(const std::vector<Doc>& docs, const std::string& kind, const std::string& name) {
  for (const auto& doc : docs) {
    if (doc.kind() == kind && doc.name() == name) return &doc;
  }
  return nullptr;
}

// The pod template (or the Pod's own spec) of a workload; null for other kinds.
YAML::Node pod_spec(const Doc& doc) {
  const auto kind = doc.kind();
  if (kind == "Pod") return doc.node["spec"];
  if (kind == "DaemonSet" || kind == "Deployment" || kind == "Job") return dig(doc.node, {"spec", "template", "spec"});
  return YAML::Node();
}

YAML::Node pod_labels(const Doc& doc) {
  if (doc.kind() == "Pod") return dig(doc.node, {"metadata", "labels"});
  return dig(doc.node, {"spec", "template", "metadata", "labels"});
}

std::vector<YAML::Node> containers(const YAML::Node& spec, bool with_init = true) {
  std::vector<YAML::Node> all;
  for (const char* key : {"initContainers", "containers"}) {
    if (!with_init && std::string(key) == "initContainers") continue;
    if (!spec[key]) continue;
    for (const auto& container : spec[key]) all.push_back(container);
  }
  return all;
}

YAML::Node container(const YAML::Node& spec, const std::string& name) {
  for (const auto& c : containers(spec)) {
    if (c["name"].as<std::string>("") == name) return c;
  }
  return YAML::Node();
}

std::vector<std::string> strings(const YAML::Node& list) {
  std::vector<std::string> out;
  if (list && list.IsSequence()) {
    for (const auto& item : list) out.push_back(item.as<std::string>());
  }
  return out;
}

// A's labels all present, with the same values, in B.
bool labels_within(const YAML::Node& a, const YAML::Node& b) {
  if (!a || !a.IsMap() || a.size() == 0) return false;
  for (const auto& label : a) {
    const auto key = label.first.as<std::string>();
    if (!b || !b[key] || b[key].as<std::string>() != label.second.as<std::string>()) return false;
  }
  return true;
}

// The one document of a kind; fails the test when there is not exactly one.
const Doc& the_one(const std::vector<Doc>& docs, const std::string& kind) {
  const Doc* found = nullptr;
  int count = 0;
  for (const auto& doc : docs) {
    if (doc.kind() == kind) {
      found = &doc;
      ++count;
    }
  }
  if (count != 1) throw std::runtime_error("expected exactly one " + kind + ", found " + std::to_string(count));
  return *found;
}

// The agent config file, as the DaemonSet mounts it: the ConfigMap key its config volume names.
YAML::Node agent_config(const std::vector<Doc>& docs) {
  const auto* config_map = find(docs, "ConfigMap", "tusk-agent-config");
  if (!config_map || !dig(config_map->node, {"data", "agent.yaml"}))
    throw std::runtime_error("no ConfigMap tusk-agent-config with agent.yaml");
  return YAML::Load(config_map->node["data"]["agent.yaml"].as<std::string>());
}

std::string scratch_dir() {
  return tusk::testing::make_scratch_dir("tusk-k8s-manifests");
}

TEST(KubernetesManifests, EveryFileParsesAndEveryDocumentIsAKnownObjectInTheNamespace) {
  std::vector<Doc> docs;
  ASSERT_NO_THROW(docs = load_docs());
  ASSERT_FALSE(docs.empty()) << "no manifests in " << kDir;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& doc : docs) {
    SCOPED_TRACE(doc.where);
    ASSERT_TRUE(doc.node.IsMap());
    const auto kind = doc.kind();
    const auto known = kKinds.find(kind);
    ASSERT_NE(known, kKinds.end()) << "unknown kind '" << kind << "'";
    EXPECT_EQ(doc.node["apiVersion"].as<std::string>(""), known->second.api_version) << kind;
    const auto name = doc.name();
    EXPECT_TRUE(std::regex_match(name, std::regex("[a-z0-9]([-a-z0-9.]*[a-z0-9])?")) && name.size() <= 253)
        << "metadata.name '" << name << "'";
    EXPECT_TRUE(seen.insert({kind, name}).second) << kind << " " << name << " declared twice";
    const auto ns = dig(doc.node, {"metadata", "namespace"});
    if (known->second.namespaced) {
      EXPECT_EQ(ns.as<std::string>(""), kNamespace) << kind << " " << name << " outside namespace " << kNamespace;
    } else {
      EXPECT_FALSE(ns) << kind << " is cluster-scoped: no metadata.namespace";
    }
  }
  EXPECT_NE(find(docs, "Namespace", kNamespace), nullptr) << "the Namespace itself is not declared";
}

TEST(KubernetesManifests, KustomizationListsEveryManifestInTheDirectory) {
  const auto kustomization = YAML::LoadFile((kDir / "kustomization.yaml").string());
  EXPECT_EQ(kustomization["apiVersion"].as<std::string>(""), "kustomize.config.k8s.io/v1beta1");
  EXPECT_EQ(kustomization["kind"].as<std::string>(""), "Kustomization");
  EXPECT_EQ(kustomization["namespace"].as<std::string>(""), kNamespace);
  std::set<std::string> listed;
  for (const auto& resource : strings(kustomization["resources"])) {
    EXPECT_TRUE(fs::is_regular_file(kDir / resource)) << "kustomization.yaml lists missing " << resource;
    EXPECT_TRUE(listed.insert(resource).second) << resource << " listed twice";
  }
  for (const auto& file : manifest_files(false)) {
    EXPECT_TRUE(listed.count(file.filename().string())) << "kustomization.yaml does not list " << file.filename();
  }
}

TEST(KubernetesManifests, EveryVolumeConfigMapSecretClaimAndVariableAPodNamesExists) {
  const auto docs = load_docs();
  const std::string all_text = [&] {
    std::string text;
    for (const auto& file : manifest_files(true)) text += slurp(file);
    return text;
  }();
  int pods = 0;
  for (const auto& doc : docs) {
    const auto spec = pod_spec(doc);
    if (!spec) continue;
    ++pods;
    SCOPED_TRACE(doc.where + " " + doc.kind() + " " + doc.name());
    std::map<std::string, YAML::Node> volumes;
    for (const auto& volume : spec["volumes"]) {
      const auto name = volume["name"].as<std::string>("");
      EXPECT_TRUE(volumes.emplace(name, YAML::Node(volume)).second) << "volume " << name << " declared twice";
      if (const auto cm = volume["configMap"]) {
        const auto* target = find(docs, "ConfigMap", cm["name"].as<std::string>(""));
        EXPECT_NE(target, nullptr) << "volume " << name << ": no ConfigMap " << cm["name"].as<std::string>("");
        for (const auto& item : cm["items"]) {
          if (target) {
            EXPECT_TRUE(dig(target->node, {"data", item["key"].as<std::string>()})) << "missing key " << item["key"];
          }
        }
      }
      if (const auto secret = volume["secret"]) {
        const auto secret_name = secret["secretName"].as<std::string>("");
        if (kUserSecrets.count(secret_name)) {
          EXPECT_NE(all_text.find("create secret generic " + secret_name), std::string::npos)
              << "Secret " << secret_name << " is the user's, but no comment says how to create it";
        } else {
          EXPECT_NE(find(docs, "Secret", secret_name), nullptr) << "volume " << name << ": no Secret " << secret_name;
        }
      }
      if (const auto claim = volume["persistentVolumeClaim"]) {
        EXPECT_NE(find(docs, "PersistentVolumeClaim", claim["claimName"].as<std::string>("")), nullptr)
            << "volume " << name << ": no claim " << claim["claimName"];
      }
    }
    std::set<std::string> mounted;
    std::set<std::string> container_names;
    for (const auto& c : containers(spec)) {
      const auto cname = c["name"].as<std::string>("");
      EXPECT_TRUE(container_names.insert(cname).second) << "container " << cname << " twice";
      EXPECT_TRUE(c["image"]) << "container " << cname << " has no image";
      std::set<std::string> mount_paths;
      for (const auto& mount : c["volumeMounts"]) {
        const auto vname = mount["name"].as<std::string>("");
        const auto volume = volumes.find(vname);
        EXPECT_NE(volume, volumes.end()) << "container " << cname << " mounts undeclared volume " << vname;
        EXPECT_TRUE(mount_paths.insert(mount["mountPath"].as<std::string>("")).second)
            << "container " << cname << " mounts twice at " << mount["mountPath"];
        mounted.insert(vname);
        if (volume != volumes.end() && mount["subPath"] && volume->second["configMap"]) {
          const auto* target = find(docs, "ConfigMap", dig(volume->second, {"configMap", "name"}).as<std::string>(""));
          if (target) {
            EXPECT_TRUE(dig(target->node, {"data", mount["subPath"].as<std::string>()}))
                << "subPath " << mount["subPath"] << " is no key of ConfigMap " << target->name();
          }
        }
      }
      // $(VAR) in command and args is expanded by Kubernetes only from the container's own env.
      std::set<std::string> env;
      for (const auto& var : c["env"]) {
        env.insert(var["name"].as<std::string>(""));
        if (const auto ref = dig(var, {"valueFrom", "configMapKeyRef"})) {
          const auto* target = find(docs, "ConfigMap", ref["name"].as<std::string>(""));
          EXPECT_TRUE(target && dig(target->node, {"data", ref["key"].as<std::string>("")})) << "env " << var["name"];
        }
        if (const auto ref = dig(var, {"valueFrom", "secretKeyRef"})) {
          const auto secret_name = ref["name"].as<std::string>("");
          EXPECT_TRUE(kUserSecrets.count(secret_name) || find(docs, "Secret", secret_name)) << "env " << var["name"];
        }
      }
      for (const char* key : {"command", "args"}) {
        for (const auto& arg : strings(c[key])) {
          const std::regex reference(R"(\$\(([A-Za-z_][A-Za-z0-9_]*)\))");
          for (std::sregex_iterator it(arg.begin(), arg.end(), reference), end; it != end; ++it) {
            EXPECT_TRUE(env.count((*it)[1].str())) << "container " << cname << ": " << arg << " names $("
                                                   << (*it)[1].str() << "), which is not in its env";
          }
        }
      }
    }
    for (const auto& [name, volume] : volumes) {
      EXPECT_TRUE(mounted.count(name)) << "volume " << name << " is declared but never mounted";
    }
  }
  EXPECT_GE(pods, 2) << "expected at least the agent DaemonSet and the controller Job";
}

TEST(KubernetesManifests, HugepagesComeWithEqualMemoryRequestsAndLimitsAndAHugetlbfsMount) {
  const auto docs = load_docs();
  int with_hugepages = 0;
  for (const auto& doc : docs) {
    const auto spec = pod_spec(doc);
    if (!spec) continue;
    bool has_hugetlbfs = false;
    std::set<std::string> hugepage_volumes;
    for (const auto& volume : spec["volumes"]) {
      if (dig(volume, {"emptyDir", "medium"}).as<std::string>("").rfind("HugePages", 0) == 0) {
        hugepage_volumes.insert(volume["name"].as<std::string>());
      }
    }
    for (const auto& c : containers(spec)) {
      SCOPED_TRACE(doc.where + " container " + c["name"].as<std::string>(""));
      const auto limits = dig(c, {"resources", "limits"});
      const auto requests = dig(c, {"resources", "requests"});
      bool hugepages = false;
      for (const auto& section : {limits, requests}) {
        if (!section) continue;
        for (const auto& resource : section) {
          if (resource.first.as<std::string>().rfind("hugepages-", 0) == 0) hugepages = true;
        }
      }
      if (!hugepages) continue;
      ++with_hugepages;
      ASSERT_TRUE(limits && requests);
      ASSERT_TRUE(limits["memory"]) << "hugepages without a memory limit";
      ASSERT_TRUE(requests["memory"]) << "hugepages without a memory request";
      EXPECT_EQ(limits["memory"].as<std::string>(), requests["memory"].as<std::string>());
      for (const auto& resource : limits) {
        const auto key = resource.first.as<std::string>();
        if (key.rfind("hugepages-", 0) != 0) continue;
        EXPECT_TRUE(requests[key] && requests[key].as<std::string>() == resource.second.as<std::string>())
            << key << ": requests must equal limits";
      }
      for (const auto& mount : c["volumeMounts"]) {
        if (hugepage_volumes.count(mount["name"].as<std::string>("")) &&
            mount["mountPath"].as<std::string>("") == "/dev/hugepages") {
          has_hugetlbfs = true;
        }
      }
      EXPECT_TRUE(has_hugetlbfs) << "hugepages requested, but no emptyDir medium HugePages at /dev/hugepages";
    }
  }
  EXPECT_GE(with_hugepages, 1) << "the agent should request hugepages";
}

TEST(KubernetesManifests, AgentDaemonSetIsHostNetworkedNamedAfterItsNodeAndReadsItsConfig) {
  const auto docs = load_docs();
  const auto& daemonset = the_one(docs, "DaemonSet");
  const auto spec = pod_spec(daemonset);
  EXPECT_TRUE(labels_within(dig(daemonset.node, {"spec", "selector", "matchLabels"}), pod_labels(daemonset)))
      << "the DaemonSet's selector does not match its pod labels";
  EXPECT_TRUE(spec["hostNetwork"].as<bool>(false)) << "agents test the node's own NICs: hostNetwork: true";
  EXPECT_EQ(spec["dnsPolicy"].as<std::string>(""), "ClusterFirstWithHostNet")
      << "a hostNetwork pod without ClusterFirstWithHostNet cannot resolve the controller's Service";
  bool tolerates_gpu = false;
  for (const auto& toleration : spec["tolerations"]) {
    if (toleration["key"].as<std::string>("") == "nvidia.com/gpu") tolerates_gpu = true;
  }
  EXPECT_TRUE(tolerates_gpu) << "agents must run on tainted GPU nodes";

  const auto agent = container(spec, "agent");
  ASSERT_TRUE(agent) << "no container named agent";
  const auto args = strings(agent["args"]);
  EXPECT_EQ(strings(agent["command"]), std::vector<std::string>{"tusk-agent"});
  const auto config_flag = std::find(args.begin(), args.end(), "--config");
  ASSERT_NE(config_flag, args.end()) << "the agent is not given --config";
  ASSERT_NE(config_flag + 1, args.end());
  const std::string config_path = *(config_flag + 1);
  EXPECT_NE(std::find(args.begin(), args.end(), "--name=$(NODE_NAME)"), args.end());

  bool node_name_from_field = false;
  for (const auto& var : agent["env"]) {
    if (var["name"].as<std::string>("") == "NODE_NAME" &&
        dig(var, {"valueFrom", "fieldRef", "fieldPath"}).as<std::string>("") == "spec.nodeName") {
      node_name_from_field = true;
    }
  }
  EXPECT_TRUE(node_name_from_field) << "NODE_NAME must come from fieldRef spec.nodeName";

  // The --config path is the ConfigMap's agent.yaml, mounted by subPath or as a directory.
  std::map<std::string, YAML::Node> volumes;
  for (const auto& volume : spec["volumes"])
    volumes.insert_or_assign(volume["name"].as<std::string>(), YAML::Node(volume));
  bool config_mounted = false;
  for (const auto& mount : agent["volumeMounts"]) {
    const auto& volume = volumes[mount["name"].as<std::string>("")];
    if (!volume || dig(volume, {"configMap", "name"}).as<std::string>("") != "tusk-agent-config") continue;
    const auto path = mount["mountPath"].as<std::string>("");
    if ((mount["subPath"] && path == config_path && mount["subPath"].as<std::string>() == "agent.yaml") ||
        (!mount["subPath"] && config_path == path + "/agent.yaml")) {
      config_mounted = true;
    }
  }
  EXPECT_TRUE(config_mounted) << config_path << " is not tusk-agent-config's agent.yaml";

  // Every file the config names (certificates) is under one of the agent's mounts.
  const auto config = agent_config(docs);
  for (const char* key : {"ca", "cert", "key"}) {
    const auto path = dig(config, {"tls", key}).as<std::string>("");
    ASSERT_FALSE(path.empty()) << "agent.yaml has no tls." << key;
    bool under_mount = false;
    for (const auto& mount : agent["volumeMounts"]) {
      const auto dir = mount["mountPath"].as<std::string>("");
      if (path.rfind(dir + "/", 0) == 0) under_mount = true;
    }
    EXPECT_TRUE(under_mount) << "tls." << key << " " << path << " is on no volume the agent mounts";
  }
  // Before: every pod mounted one Secret with every node's private key, so one compromised node
  // could be any agent. The certificate volume is the node's own directory, and no Secret of
  // agent keys is mounted at all.
  for (const auto& mount : agent["volumeMounts"]) {
    if (mount["mountPath"].as<std::string>("") != "/etc/tusk/tls") continue;
    const auto& volume = volumes[mount["name"].as<std::string>("")];
    EXPECT_EQ(dig(volume, {"hostPath", "path"}).as<std::string>(""), "/etc/tusk/tls");
    EXPECT_EQ(dig(volume, {"hostPath", "type"}).as<std::string>(""), "Directory");
    EXPECT_TRUE(mount["readOnly"].as<bool>(false)) << "the certificate volume is writable";
  }
  for (const auto& [name, volume] : volumes)
    EXPECT_FALSE(volume["secret"]) << "the agent mounts Secret volume " << name;
  EXPECT_FALSE(spec["initContainers"]) << "an init container would see more than the agent needs";

  // Least privilege: exactly the three capabilities the engines use, everything else dropped; no
  // escalation, the runtime's seccomp filter, a read-only root, not privileged.
  const auto security = agent["securityContext"];
  EXPECT_EQ(strings(dig(security, {"capabilities", "drop"})), std::vector<std::string>{"ALL"});
  std::set<std::string> capabilities;
  for (const auto& cap : strings(dig(security, {"capabilities", "add"}))) capabilities.insert(cap);
  EXPECT_EQ(capabilities, (std::set<std::string>{"IPC_LOCK", "NET_RAW", "NET_ADMIN"}))
      << "the unit's two and IPC_LOCK, as a pod cannot lift its memlock limit";
  EXPECT_FALSE(security["allowPrivilegeEscalation"].as<bool>(true));
  EXPECT_TRUE(security["readOnlyRootFilesystem"].as<bool>(false));
  EXPECT_EQ(dig(security, {"seccompProfile", "type"}).as<std::string>(""), "RuntimeDefault");
  EXPECT_FALSE(security["privileged"].as<bool>(false));
  EXPECT_TRUE(dig(agent, {"resources", "limits", "rdma/hca_shared_devices_a"})) << "no RDMA device resource";
}

// Before: the controller Job had no securityContext at all.
TEST(KubernetesManifests, TheControllerRunsUnprivilegedWithNothingToGain) {
  const auto docs = load_docs();
  const auto spec = pod_spec(the_one(docs, "Job"));
  const auto controller = container(spec, "controller");
  ASSERT_TRUE(controller);
  EXPECT_TRUE(dig(spec, {"securityContext", "runAsNonRoot"}).as<bool>(false));
  EXPECT_GT(dig(spec, {"securityContext", "runAsUser"}).as<int>(0), 0);
  EXPECT_EQ(dig(spec, {"securityContext", "seccompProfile", "type"}).as<std::string>(""), "RuntimeDefault");
  const auto security = controller["securityContext"];
  EXPECT_EQ(strings(dig(security, {"capabilities", "drop"})), std::vector<std::string>{"ALL"});
  EXPECT_FALSE(dig(security, {"capabilities", "add"})) << "the controller needs no capability";
  EXPECT_FALSE(security["allowPrivilegeEscalation"].as<bool>(true));
  EXPECT_TRUE(security["readOnlyRootFilesystem"].as<bool>(false));
  // What it writes (reports, history, the fallback TMPDIR) is on volumes, not its root.
  std::set<std::string> mounted;
  for (const auto& mount : controller["volumeMounts"]) mounted.insert(mount["mountPath"].as<std::string>(""));
  EXPECT_TRUE(mounted.count("/tmp")) << "no writable /tmp for the report fallback";
  const auto args = strings(controller["args"]);
  const auto history = std::find(args.begin(), args.end(), "--history");
  ASSERT_NE(history, args.end()) << "the default history is under the container's read-only home";
  ASSERT_NE(history + 1, args.end());
  EXPECT_EQ((history + 1)->rfind("/reports/", 0), 0u) << *(history + 1);
}

TEST(KubernetesManifests, ServiceReachesTheControllerJobOnThePortAgentsDial) {
  const auto docs = load_docs();
  const auto& service = the_one(docs, "Service");
  const auto& job = the_one(docs, "Job");
  EXPECT_EQ(dig(service.node, {"spec", "type"}).as<std::string>("ClusterIP"), "ClusterIP");
  EXPECT_TRUE(labels_within(dig(service.node, {"spec", "selector"}), pod_labels(job)))
      << "the Service's selector does not select the controller Job's pod";
  // ... and nothing else: not the agents.
  EXPECT_FALSE(labels_within(dig(service.node, {"spec", "selector"}), pod_labels(the_one(docs, "DaemonSet"))));

  const auto config = agent_config(docs);
  const auto controller = config["controller"].as<std::string>("");
  const auto colon = controller.rfind(':');
  ASSERT_NE(colon, std::string::npos) << "agent.yaml controller '" << controller << "' is not host:port";
  const auto host = controller.substr(0, colon);
  const int port = std::stoi(controller.substr(colon + 1));
  EXPECT_TRUE(host == service.name() + "." + kNamespace + ".svc" ||
              host == service.name() + "." + kNamespace + ".svc.cluster.local")
      << "agents dial " << host << ", not the Service " << service.name();

  ASSERT_TRUE(dig(service.node, {"spec", "ports"}).IsSequence());
  ASSERT_EQ(dig(service.node, {"spec", "ports"}).size(), 1u);
  const auto service_port = dig(service.node, {"spec", "ports"})[0];
  EXPECT_EQ(service_port["port"].as<int>(0), port) << "the Service's port is not the one agents dial";

  const auto spec = pod_spec(job);
  EXPECT_EQ(spec["restartPolicy"].as<std::string>(""), "Never");
  const auto controller_container = container(spec, "controller");
  ASSERT_TRUE(controller_container);
  // targetPort: a named or numbered containerPort of the controller.
  std::optional<int> target;
  const auto target_port = service_port["targetPort"] ? service_port["targetPort"] : service_port["port"];
  for (const auto& container_port : controller_container["ports"]) {
    if (container_port["name"].as<std::string>("") == target_port.as<std::string>() ||
        container_port["containerPort"].as<std::string>() == target_port.as<std::string>()) {
      target = container_port["containerPort"].as<int>();
    }
  }
  ASSERT_TRUE(target) << "targetPort " << target_port << " is no port of the controller container";
  const auto args = strings(controller_container["args"]);
  const auto listen = std::find(args.begin(), args.end(), "--listen");
  ASSERT_NE(listen, args.end()) << "the controller does not --listen beyond loopback";
  ASSERT_NE(listen + 1, args.end());
  EXPECT_EQ(*(listen + 1), "0.0.0.0:" + std::to_string(*target)) << "the controller listens elsewhere";
}

TEST(KubernetesManifests, ControllerJobRunsAProfileOfItsConfigMapAndWritesToTheReportsVolume) {
  const auto docs = load_docs();
  const auto& job = the_one(docs, "Job");
  const auto spec = pod_spec(job);
  const auto controller = container(spec, "controller");
  ASSERT_TRUE(controller);
  EXPECT_EQ(strings(controller["command"]), std::vector<std::string>{"tusk-controller"});
  const auto args = strings(controller["args"]);
  ASSERT_GE(args.size(), 2u);
  EXPECT_EQ(args[0], "run");
  const fs::path profile = args[1];
  std::map<std::string, YAML::Node> volumes;
  for (const auto& volume : spec["volumes"])
    volumes.insert_or_assign(volume["name"].as<std::string>(), YAML::Node(volume));
  bool profile_found = false;
  bool out_on_volume = false;
  const auto out = std::find(args.begin(), args.end(), "--out");
  ASSERT_NE(out, args.end()) << "no --out: the report would go to the container's own disk";
  ASSERT_NE(out + 1, args.end());
  for (const auto& mount : controller["volumeMounts"]) {
    const auto& volume = volumes[mount["name"].as<std::string>("")];
    const auto path = mount["mountPath"].as<std::string>("");
    if (volume && volume["configMap"] && profile.parent_path() == path) {
      const auto* profiles = find(docs, "ConfigMap", dig(volume, {"configMap", "name"}).as<std::string>(""));
      profile_found = profiles && dig(profiles->node, {"data", profile.filename().string()});
    }
    if (volume && volume["persistentVolumeClaim"] && (out + 1)->rfind(path + "/", 0) == 0 &&
        !mount["readOnly"].as<bool>(false)) {
      out_on_volume = true;
    }
  }
  EXPECT_TRUE(profile_found) << profile << " is no key of a mounted ConfigMap";
  EXPECT_TRUE(out_on_volume) << "--out " << *(out + 1) << " is not on the writable reports claim";
  EXPECT_EQ(dig(job.node, {"spec", "backoffLimit"}).as<int>(-1), 0) << "a failed burn-in must not run again by itself";
}

// Every profile in the controller's ConfigMap, through the real validator.
TEST(KubernetesManifests, EmbeddedProfilesPassTuskControllerValidate) {
  const auto docs = load_docs();
  const auto dir = scratch_dir();
  int profiles = 0;
  for (const auto& doc : docs) {
    if (doc.kind() != "ConfigMap" || doc.name() != "tusk-profiles") continue;
    for (const auto& entry : doc.node["data"]) {
      const auto key = entry.first.as<std::string>();
      SCOPED_TRACE("tusk-profiles/" + key);
      const auto path = dir + "/" + key;
      std::ofstream(path) << entry.second.as<std::string>();
      Process validate({tusk::build_paths::controller_bin(), "validate", path}, dir + "/" + key + ".log");
      EXPECT_EQ(validate.wait(std::chrono::seconds(30)), 0) << validate.log();
      ++profiles;
    }
  }
  EXPECT_GE(profiles, 1) << "no ConfigMap tusk-profiles with a profile";
  fs::remove_all(dir);
}

// The embedded agent.yaml through the real `tusk-agent --check-config`, which rejects unknown
// keys and bad values. Its certificates are the init container's, in the pod only: this node's
// stand-ins are given as flags, which win over the file.
TEST(KubernetesManifests, EmbeddedAgentConfigPassesTuskAgentCheckConfig) {
  const auto docs = load_docs();
  const auto* config_map = find(docs, "ConfigMap", "tusk-agent-config");
  ASSERT_NE(config_map, nullptr);
  const auto text = dig(config_map->node, {"data", "agent.yaml"}).as<std::string>("");
  ASSERT_FALSE(text.empty());
  const auto config = YAML::Load(text);
  EXPECT_FALSE(config["name"]) << "the name comes from the node (--name=$(NODE_NAME)), not the shared file";

  const auto dir = scratch_dir();
  ASSERT_TRUE(tusk::testing::make_certs(dir + "/certs", {"node-1"}));
  std::ofstream(dir + "/agent.yaml") << text;
  Process check(
      {tusk::build_paths::agent_bin(), "--config", dir + "/agent.yaml", "--check-config", "--name=node-1", "--ca",
       dir + "/certs/ca.pem", "--cert", dir + "/certs/node-1.pem", "--key", dir + "/certs/node-1.key"},
      dir + "/check.log");
  // The file is valid; what it names that this machine lacks (its NIC's PCI address) is all that may fail.
  const auto exit_code = check.wait(std::chrono::seconds(30));
  if (exit_code != 0) {
    EXPECT_EQ(exit_code, 2) << check.log();
    std::istringstream lines(check.log());
    for (std::string line; std::getline(lines, line);) {
      EXPECT_NE(line.find(": this host has no "), std::string::npos) << line;
    }
  }
  fs::remove_all(dir);
}

}  // namespace
