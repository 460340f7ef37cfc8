// Kubernetes' node actions through the real kubectl, against an API server of this test's that
// answers as a Kubernetes 1.29 API server does (discovery, a NodeList, a Node, a merge patch's
// answer, a 409 Conflict) and records every request: the merge patches kubectl sends are checked
// body by body, and the verbs they take are exactly those deploy/kubernetes/controller-rbac.yaml
// grants. No cluster is available here; kubectl is Debian's kubernetes-client (skipped without one).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "controller/actions/act_command.hpp"
#include "controller/actions/kube_nodes.hpp"
#include "tests/support/build_paths.hpp"

namespace tusk {
namespace {

using plain_json = nlohmann::json;  // not `json`: other tests of this target alias that as ordered_json
using ::testing::HasSubstr;

// Three nodes as `kubectl get nodes -o plain_json` lists them: gpu-a with an operator's taint and a
// cordon, gpu-b tainted by an earlier Tusk run, gpu-c.rack2.example passing already.
plain_json node_list() {
  return plain_json::parse(R"({"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "98113"},
   "items": [
    {"metadata": {"name": "gpu-a", "uid": "5f0c", "resourceVersion": "97001",
                  "labels": {"kubernetes.io/hostname": "gpu-a", "nvidia.com/gpu.present": "true"},
                  "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
     "spec": {"podCIDR": "10.244.1.0/24", "unschedulable": true,
              "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                          "timeAdded": "2026-11-30T08:00:00Z"},
                         {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
     "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
    {"metadata": {"name": "gpu-b", "uid": "6a1d", "resourceVersion": "97002",
                  "labels": {"kubernetes.io/hostname": "gpu-b", "tusk.io/burn-in": "fail"},
                  "annotations": {"tusk.io/burn-in-fault": "tusk r-6: host problem"}},
     "spec": {"taints": [{"key": "tusk.io/burn-in", "value": "r-6", "effect": "NoSchedule"}]},
     "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
    {"metadata": {"name": "gpu-c.rack2.example", "uid": "7b2e", "resourceVersion": "97003",
                  "labels": {"kubernetes.io/hostname": "gpu-c", "tusk.io/burn-in": "pass"}},
     "spec": {},
     "status": {"conditions": [{"type": "Ready", "status": "True"}]}}]})");
}

struct Request {
  std::string method;
  std::string path;  // without the query
  std::string content_type;
  std::string body;
};

// An API server over plain HTTP on loopback: one thread per connection (kubectl opens several
// at once for discovery), every request recorded.
class ReplayApiServer {
 public:
  explicit ReplayApiServer(plain_json nodes) : nodes_(std::move(nodes)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        ::listen(listener_, 16) != 0 || ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      throw std::runtime_error("cannot listen on loopback");
    }
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~ReplayApiServer() {
    stopping_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    acceptor_.join();
    {
      std::lock_guard lock(mutex_);
      for (const int fd : connections_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& thread : threads_) thread.join();
    for (const int fd : connections_) ::close(fd);  // only now: a number closed earlier could be reused
    ::close(listener_);
  }
  int port() const { return port_; }
  void conflict_on(const std::string& node) {
    std::lock_guard lock(mutex_);  // a connection thread of an earlier kubectl may still read it
    conflict_ = node;
  }
  std::vector<Request> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void accept_loop() {
    while (!stopping_) {
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      std::lock_guard lock(mutex_);
      connections_.push_back(fd);
      threads_.emplace_back([this, fd] { answer_each_request(fd); });
    }
  }

  // Until the peer closes or the server stops.
  void answer_each_request(int fd) {
    std::string buffer;
    char chunk[65536];
    for (;;) {
      std::size_t head_end;
      while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos) {
        const ssize_t got = ::recv(fd, chunk, sizeof(chunk), 0);
        if (got <= 0) return;
        buffer.append(chunk, static_cast<std::size_t>(got));
      }
      const std::string head = buffer.substr(0, head_end);
      Request request;
      std::istringstream lines(head);
      std::string target;
      lines >> request.method >> target;
      request.path = target.substr(0, target.find('?'));
      std::size_t body_length = 0;
      for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string name = line.substr(0, colon);
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const std::string value = line.substr(line.find_first_not_of(' ', colon + 1));
        if (name == "content-length") body_length = std::stoul(value);
        if (name == "content-type") request.content_type = value;
      }
      buffer.erase(0, head_end + 4);
      while (buffer.size() < body_length) {
        const ssize_t got = ::recv(fd, chunk, sizeof(chunk), 0);
        if (got <= 0) return;
        buffer.append(chunk, static_cast<std::size_t>(got));
      }
      request.body = buffer.substr(0, body_length);
      buffer.erase(0, body_length);
      const auto [status, answer] = answer_to(request);
      {
        std::lock_guard lock(mutex_);
        requests_.push_back(request);
      }
      const std::string text = answer.dump();
      const std::string response =
          "HTTP/1.1 " + std::to_string(status) + (status == 200 ? " OK" : " Error") +
          "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(text.size()) + "\r\n\r\n" + text;
      if (::send(fd, response.data(), response.size(), MSG_NOSIGNAL) < 0) return;
    }
  }

  plain_json status(int code, const std::string& reason, const std::string& message) const {
    return {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", plain_json::object()},
            {"status", "Failure"}, {"message", message}, {"reason", reason},
            {"code", code}};
  }

  std::pair<int, plain_json> answer_to(const Request& request) const {
    const std::string nodes_path = "/api/v1/nodes";
    if (request.method == "GET" && request.path == "/version") {
      return {200, {{"major", "1"}, {"minor", "29"}, {"gitVersion", "v1.29.4"}, {"platform", "linux/amd64"}}};
    }
    if (request.method == "GET" && request.path == "/api") {
      return {200,
              {{"kind", "APIVersions"},
               {"versions", {"v1"}},
               {"serverAddressByClientCIDRs", {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", "10.0.0.1:6443"}}}}}};
    }
    if (request.method == "GET" && request.path == "/apis") {
      return {200, {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", plain_json::array()}}};
    }
    if (request.method == "GET" && request.path == "/api/v1") {
      return {200, plain_json::parse(R"({"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                 {"name": "nodes", "singularName": "node", "namespaced": false, "kind": "Node",
                  "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
                  "shortNames": ["no"]},
                 {"name": "nodes/status", "singularName": "", "namespaced": false, "kind": "Node",
                  "verbs": ["get", "patch", "update"]}]})")};
    }
    if (request.method == "GET" && request.path == nodes_path) return {200, nodes_};
    if (request.path.rfind(nodes_path + "/", 0) == 0) {
      const std::string name = request.path.substr(nodes_path.size() + 1);
      for (const auto& item : nodes_["items"]) {
        if (item["metadata"]["name"] != name) continue;
        plain_json node = item;
        node["kind"] = "Node";
        node["apiVersion"] = "v1";
        if (request.method == "GET") return {200, node};
        if (request.method == "PATCH" && name == conflict()) {
          return {409, status(409, "Conflict",
                              "Operation cannot be fulfilled on nodes \"" + name +
                                  "\": the object has been modified; please apply your changes to the latest "
                                  "version and try again")};
        }
        if (request.method == "PATCH") {
          node.merge_patch(plain_json::parse(request.body));
          return {200, node};
        }
      }
      return {404, status(404, "NotFound", "nodes \"" + name + "\" not found")};
    }
    return {404, status(404, "NotFound", "the server could not find the requested resource")};
  }

  std::string conflict() const {
    std::lock_guard lock(mutex_);
    return conflict_;
  }

  plain_json nodes_;
  std::string conflict_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable std::mutex mutex_;
  std::vector<int> connections_;
  std::vector<std::thread> threads_;
  std::vector<Request> requests_;
};

class KubeNodes : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v kubectl >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "no kubectl: apt-get install kubernetes-client";
    }
    char pattern[] = "/tmp/tusk-kubectl-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    std::ofstream(dir_ + "/kubeconfig") << "apiVersion: v1\nkind: Config\n"
                                        << "clusters: [{name: lab, cluster: {server: \"http://127.0.0.1:"
                                        << server_.port() << "\"}}]\n"
                                        << "users: [{name: tusk, user: {token: not-a-secret}}]\n"
                                        << "contexts: [{name: lab, context: {cluster: lab, user: tusk}}]\n"
                                        << "current-context: lab\n";
    // kubectl's discovery cache goes under $HOME/.kube: this test's, not the user's.
    setenv("KUBECONFIG", (dir_ + "/kubeconfig").c_str(), 1);
    setenv("HOME", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::vector<Request> patches() const {
    std::vector<Request> out;
    for (const auto& request : server_.requests()) {
      if (request.method == "PATCH") out.push_back(request);
    }
    return out;
  }

  ReplayApiServer server_{node_list()};
  std::string dir_;
};

RunBlame run_blame() {
  RunBlame blame;
  blame.run_id = "20261202T091500Z-4c2a";
  blame.finished = true;
  blame.nodes = {"gpu-a", "gpu-b", "gpu-c", "gpu-d"};
  blame.faults = {{"gpu-a", "suspect link gpu-a:eth1 -> leaf1:swp1 (high)"}};
  blame.passed = {"gpu-b", "gpu-c", "gpu-d"};
  return blame;
}

TEST_F(KubeNodes, NodesAreReadThroughKubectlWithTheirBurnInLabelAndTaints) {
  std::string error;
  const auto nodes = read_kube_nodes(error);
  ASSERT_TRUE(nodes) << error;
  ASSERT_EQ(nodes->size(), 3u);
  const KubeNode& a = nodes->at("gpu-a");
  EXPECT_EQ(a.resource_version, "97001");
  EXPECT_FALSE(a.tainted);
  EXPECT_EQ(a.other_taints.size(), 2u);
  const KubeNode& b = nodes->at("gpu-b");
  EXPECT_TRUE(b.tainted);
  EXPECT_EQ(b.result, "fail");
  EXPECT_EQ(b.fault, "tusk r-6: host problem");
  EXPECT_TRUE(b.other_taints.empty());
  EXPECT_EQ(nodes->at("gpu-c.rack2.example").result, "pass");
}

TEST_F(KubeNodes, AFailedNodeIsLabelledAndTaintedAndARepairedOneReturnedWithOtherTaintsKept) {
  std::string error;
  const auto nodes = read_kube_nodes(error);
  ASSERT_TRUE(nodes) << error;
  const KubePlan plan = plan_kube_patches(run_blame(), *nodes, 1.0);
  ASSERT_EQ(plan.patches.size(), 2u);  // gpu-c passes already: nothing to change
  for (const auto& patch : plan.patches) EXPECT_EQ(take_kube_patch(patch), "") << patch.node;
  EXPECT_THAT(plan.notes, ::testing::Contains(HasSubstr("gpu-d: passed, but Kubernetes has no such node")));

  const auto sent = patches();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].path, "/api/v1/nodes/gpu-a");
  EXPECT_EQ(sent[0].content_type, "application/merge-patch+json");
  EXPECT_EQ(plain_json::parse(sent[0].body), plain_json::parse(R"json({
    "metadata": {"resourceVersion": "97001",
                 "labels": {"tusk.io/burn-in": "fail"},
                 "annotations": {"tusk.io/burn-in-fault":
                     "tusk 20261202T091500Z-4c2a: suspect link gpu-a:eth1 -> leaf1:swp1 (high)"}},
    "spec": {"taints": [
      {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2026-11-30T08:00:00Z"},
      {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
      {"key": "tusk.io/burn-in", "value": "20261202T091500Z-4c2a", "effect": "NoSchedule"}]}})json"));
  EXPECT_EQ(sent[1].path, "/api/v1/nodes/gpu-b");
  EXPECT_EQ(plain_json::parse(sent[1].body), plain_json::parse(R"json({
    "metadata": {"resourceVersion": "97002",
                 "labels": {"tusk.io/burn-in": "pass"},
                 "annotations": {"tusk.io/burn-in-fault": null}},
    "spec": {"taints": []}})json"));
}

TEST_F(KubeNodes, ANodeChangedSinceItWasReadIsRefusedNeverOverwritten) {
  std::string error;
  const auto nodes = read_kube_nodes(error);
  ASSERT_TRUE(nodes) << error;
  server_.conflict_on("gpu-a");
  const KubePlan plan = plan_kube_patches(run_blame(), *nodes, 1.0);
  ASSERT_FALSE(plan.patches.empty());
  ASSERT_EQ(plan.patches[0].node, "gpu-a");
  EXPECT_THAT(take_kube_patch(plan.patches[0]), HasSubstr("the object has been modified"));
}

TEST_F(KubeNodes, PastTheShareCapNothingIsPatched) {
  std::string error;
  const auto nodes = read_kube_nodes(error);
  ASSERT_TRUE(nodes) << error;
  EXPECT_FALSE(plan_kube_patches(run_blame(), *nodes, 0.05).capped) << "1 of 4 blamed: one node is always allowed";
  RunBlame two = run_blame();
  two.faults["gpu-b"] = "test mesh: loss";
  std::erase(two.passed, "gpu-b");
  const KubePlan plan = plan_kube_patches(two, *nodes, 0.05);  // 2 of 4 blamed
  EXPECT_TRUE(plan.capped);
  EXPECT_TRUE(plan.patches.empty());
}

// The verbs kubectl's requests take on nodes, as the API server's authoriser names them.
std::set<std::string> verbs_of(const std::vector<Request>& requests) {
  std::set<std::string> verbs;
  for (const auto& request : requests) {
    if (request.path == "/api/v1/nodes") verbs.insert(request.method == "GET" ? "list" : request.method);
    if (request.path.rfind("/api/v1/nodes/", 0) == 0) {
      verbs.insert(request.method == "GET" ? "get" : request.method == "PATCH" ? "patch" : request.method);
    }
  }
  return verbs;
}

TEST_F(KubeNodes, TheControllersClusterRoleGrantsExactlyTheVerbsKubectlUses) {
  std::string error;
  const auto nodes = read_kube_nodes(error);
  ASSERT_TRUE(nodes) << error;
  for (const auto& patch : plan_kube_patches(run_blame(), *nodes, 1.0).patches) take_kube_patch(patch);
  const auto used = verbs_of(server_.requests());

  std::set<std::string> granted;
  std::set<std::string> resources;
  const auto file = std::filesystem::path(build_paths::source_dir()) / "deploy/kubernetes/controller-rbac.yaml";
  for (const auto& document : YAML::LoadAllFromFile(file.string())) {
    if (document["kind"].as<std::string>("") != "ClusterRole") continue;
    for (const auto& rule : document["rules"]) {
      for (const auto& resource : rule["resources"]) resources.insert(resource.as<std::string>());
      for (const auto& verb : rule["verbs"]) granted.insert(verb.as<std::string>());
    }
  }
  EXPECT_EQ(resources, std::set<std::string>{"nodes"});
  EXPECT_EQ(granted, used);
  EXPECT_EQ(used, (std::set<std::string>{"get", "list", "patch"}));
}

// `tusk-controller act REPORT --kubernetes` end to end but for the cluster: a loopback stream of
// gpu-a failed (blamed), gpu-b's passed (its earlier taint goes); --dry-run patches nothing.
TEST_F(KubeNodes, ActOnAReportLabelsAndTaintsThroughKubectl) {
  const std::string report = dir_ + "/report.json";
  std::ofstream(report) << R"({"run_id": "r-9", "status": "finished",
    "agents": [{"name": "gpu-a", "hostname": "gpu-a", "connected_at_end": true},
               {"name": "gpu-b", "hostname": "gpu-b.rack1", "connected_at_end": true}],
    "tests": [{"name": "plug", "verdict": "fail", "problems": [],
               "agents": [{"agent": "gpu-a"}, {"agent": "gpu-b"}],
               "streams": [{"agent": "gpu-a", "peer": "gpu-a", "stream_id": "rx:loopback", "passed": false},
                           {"agent": "gpu-b", "peer": "gpu-b", "stream_id": "rx:loopback", "passed": true}]}]})";
  const auto act = [&](std::vector<std::string> args, std::ostringstream& out, std::ostringstream& err) {
    CLI::App app;
    ActCommand command(app);
    args.insert(args.begin(), {"act", report, "--kubernetes", "--max-share", "100%"});
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.parse(args);
    return command.run_chosen(out, err).value_or(-1);
  };
  std::ostringstream out, err;
  EXPECT_EQ(act({"--dry-run"}, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("would label gpu-a tusk.io/burn-in=fail, taint NoSchedule"));
  EXPECT_THAT(out.str(), HasSubstr("would label gpu-b tusk.io/burn-in=pass"));
  EXPECT_TRUE(patches().empty());
  std::ostringstream out2, err2;
  EXPECT_EQ(act({}, out2, err2), 0) << err2.str();
  EXPECT_THAT(out2.str(), HasSubstr("label gpu-a tusk.io/burn-in=fail, taint NoSchedule\n"));
  const auto sent = patches();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(plain_json::parse(sent[0].body)["metadata"]["annotations"]["tusk.io/burn-in-fault"],
            "tusk r-9: test plug: stream rx:loopback of its own port failed");
  EXPECT_EQ(sent[1].path, "/api/v1/nodes/gpu-b");
}

// A hostile agent's run, as the controller reports it (ControlPlaneE2E.AnAgentThatReportsAnother...):
// 'evil' holds a certificate of its own, reported gpu-b's hostname and failed its loopback. Before,
// the node was the reported hostname: gpu-b was tainted for evil's stream. Now evil is its own node,
// which the cluster does not have, and gpu-b, which passed, loses its earlier taint.
TEST_F(KubeNodes, AnAgentThatReportsAnotherNodesHostnameGetsThatNodeNeitherTaintedNorLabelledFailed) {
  const std::string report = dir_ + "/report.json";
  std::ofstream(report) << R"({"run_id": "r-10", "status": "finished",
    "agents": [{"name": "evil", "hostname": "gpu-b", "node": "evil", "connected_at_end": true,
                "node_proof": "its certificate's name: it reported the hostname 'gpu-b', which its certificate does not name"},
               {"name": "gpu-b", "hostname": "gpu-b", "node": "gpu-b", "connected_at_end": true,
                "node_proof": "its hostname, which its certificate names"}],
    "tests": [{"name": "plug", "verdict": "fail", "problems": [],
               "agents": [{"agent": "evil"}, {"agent": "gpu-b"}],
               "streams": [{"agent": "evil", "peer": "self", "stream_id": "rx:self/1", "passed": false},
                           {"agent": "gpu-b", "peer": "self", "stream_id": "rx:self/1", "passed": true}]}]})";
  CLI::App app;
  ActCommand command(app);
  std::vector<std::string> args{"act", report, "--kubernetes", "--max-share", "100%"};
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
  std::ostringstream out, err;
  command.run_chosen(out, err);
  EXPECT_THAT(err.str(), HasSubstr("evil: blamed (test plug: stream rx:self/1 of its own port failed), but Kubernetes "
                                   "has no such node"));
  const auto sent = patches();
  ASSERT_EQ(sent.size(), 1u) << out.str() << err.str();
  EXPECT_EQ(sent[0].path, "/api/v1/nodes/gpu-b");
  EXPECT_EQ(plain_json::parse(sent[0].body)["metadata"]["labels"]["tusk.io/burn-in"], "pass") << sent[0].body;
  EXPECT_EQ(out.str().find("gpu-b tusk.io/burn-in=fail"), std::string::npos) << out.str();
}

TEST(KubeLabelValue, AnyTextBecomesAValidLabelValue) {
  EXPECT_EQ(kube_label_value("20261202T091500Z-4c2a"), "20261202T091500Z-4c2a");
  EXPECT_EQ(kube_label_value("--run id/\xc3\xa9!--"), "run-id");  // cut back to alphanumeric ends
  EXPECT_EQ(kube_label_value(std::string(100, 'x')).size(), 63u);
  EXPECT_EQ(kube_label_value("---"), "");
}

TEST(KubeNodesParse, ANodeListWithoutItemsIsRefusedAndOddItemsAreSkipped) {
  EXPECT_THROW(parse_kube_nodes(plain_json::parse(R"({"kind": "Status"})")), std::runtime_error);
  const auto nodes = parse_kube_nodes(plain_json::parse(R"({"items": [1, {"metadata": 2}, {"metadata": {"name": ""}},
      {"metadata": {"name": "n", "labels": []}, "spec": {"taints": [3, {"key": "tusk.io/burn-in"}]}}]})"));
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_TRUE(nodes.at("n").tainted);
  EXPECT_EQ(nodes.at("n").other_taints, plain_json::array({3}));
}

}  // namespace
}  // namespace tusk
