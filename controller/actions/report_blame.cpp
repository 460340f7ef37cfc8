#include "controller/actions/report_blame.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include "common/json_text.hpp"
#include "common/loopback_peer.hpp"
#include "common/printable.hpp"
#include "controller/run/agent_identity.hpp"

namespace tusk {
namespace {

using plain_json = nlohmann::json;  // not `json`: the report files alias that as ordered_json

// A fault text is a peer's words in part (agent names, problems): printable and one line.
constexpr std::size_t kMaxFaultBytes = 200;

const plain_json& array_at(const plain_json& object, const char* key) {
  static const plain_json empty = plain_json::array();
  const auto found = object.is_object() ? object.find(key) : object.end();
  return found != object.end() && found->is_array() ? *found : empty;
}

// Each judged test: a test and, for a method, each of its steps' tests.
void for_each_test(const plain_json& test, const std::function<void(const plain_json&)>& visit) {
  if (!test.is_object()) return;
  visit(test);
  const auto method = test.find("method");
  if (method == test.end() || !method->is_object()) return;
  for (const auto& step : array_at(*method, "steps")) {
    if (step.is_object() && step.contains("test")) for_each_test(step["test"], visit);
  }
}

}  // namespace

std::string node_name(const std::string& hostname, const std::string& agent) {
  const std::string host = short_host_name(hostname);
  return printable(host.empty() ? agent : host);
}

namespace {

// Each agent's node, into blame.node_of and blame.nodes; returns the nodes that were not
// connected at the end.
std::set<std::string> read_nodes(const plain_json& report, RunBlame& blame) {
  std::set<std::string> disconnected;
  // Agents of one host are one node. Two hosts whose short names collide (gpu01.rack1, gpu01.rack2)
  // keep their full names: a scheduler then finds no such node and says so, rather than draining
  // one host for the other's fault.
  // The host is the one the run proved (agents[].node: what the agent's certificate names, never
  // its word alone); a report from before that has only the hostname the agent reported.
  const auto host_of = [](const plain_json& agent) {
    const std::string proven = string_member(agent, "node");
    return proven.empty() ? string_member(agent, "hostname") : proven;
  };
  std::map<std::string, std::set<std::string>> hosts_of_short_name;
  for (const auto& agent : array_at(report, "agents")) {
    const std::string hostname = host_of(agent);
    hosts_of_short_name[node_name(hostname, string_member(agent, "name"))].insert(hostname);
  }
  for (const auto& agent : array_at(report, "agents")) {
    const std::string name = string_member(agent, "name");
    if (name.empty()) continue;
    const std::string hostname = host_of(agent);
    std::string node = node_name(hostname, name);
    if (hosts_of_short_name[node].size() > 1 && !hostname.empty()) node = printable(hostname);
    blame.node_of[name] = node;
    if (std::find(blame.nodes.begin(), blame.nodes.end(), node) == blame.nodes.end()) blame.nodes.push_back(node);
    const auto connected = agent.find("connected_at_end");
    if (connected == agent.end() || !connected->is_boolean() || !connected->get<bool>()) disconnected.insert(node);
  }
  return disconnected;
}

}  // namespace

RunBlame blame_from_report(const plain_json& report, const std::string& file) {
  if (!report.is_object() || !report.contains("run_id") || !report.contains("agents") || !report["agents"].is_array()) {
    throw std::runtime_error(fmt::format("{}: not a Tusk report.json (no run_id or agents[])", file));
  }
  RunBlame blame;
  blame.run_id = printable(string_member(report, "run_id"));
  blame.finished = string_member(report, "status") == "finished";
  const std::set<std::string> disconnected = read_nodes(report, blame);
  const auto blame_agent = [&](const std::string& agent, const std::string& fault) {
    const auto node = blame.node_of.find(agent);
    if (node == blame.node_of.end()) return;
    std::string line = printable(fault);
    if (line.size() > kMaxFaultBytes) line = cut_utf8(line, kMaxFaultBytes) + "...";
    blame.faults.try_emplace(node->second, std::move(line));
  };
  std::set<std::string> failed_streams;              // nodes with a stream that failed
  std::map<std::string, std::string> lone_failures;  // node -> a test that failed on it alone
  std::set<std::string> unjudged;                    // nodes of a test that failed as a whole
  std::set<std::string> network;
  for (const auto& top : array_at(report, "tests")) {
    for_each_test(top, [&](const plain_json& test) {
      const std::string test_name = string_member(test, "name");
      for (const auto& stream : array_at(test, "streams")) {
        const auto passed = stream.is_object() ? stream.find("passed") : stream.end();
        if (passed == stream.end() || !passed->is_boolean() || passed->get<bool>()) continue;
        const std::string agent = string_member(stream, "agent");
        if (const auto node = blame.node_of.find(agent); node != blame.node_of.end()) {
          failed_streams.insert(node->second);
        }
        // Itself as its peer (a loopback test): the host's own port, cable or plug. A NIC's own
        // counters (no peer) also count what a fault elsewhere did to it: not blamed by themselves.
        const std::string peer = string_member(stream, "peer");
        if (peer == agent || peer == wire::kLoopbackPeer) {
          blame_agent(agent, fmt::format("test {}: stream {} of its own port failed", test_name,
                                         string_member(stream, "stream_id")));
        }
      }
      // A test that failed on one node alone with nothing narrower to name (nothing came back
      // through a loopback plug): that node, the only place it can be.
      std::set<std::string> test_nodes;
      for (const auto& agent : array_at(test, "agents")) {  // what each agent sent of the test
        if (const auto node = blame.node_of.find(string_member(agent, "agent")); node != blame.node_of.end()) {
          test_nodes.insert(node->second);
        }
      }
      // Problems of the test as a whole (an agent lost, a threshold judged on no stream) leave
      // its nodes unjudged: none of them has passed.
      if (string_member(test, "verdict") == "fail" && !array_at(test, "problems").empty()) {
        unjudged.insert(test_nodes.begin(), test_nodes.end());
      }
      if (string_member(test, "verdict") == "fail" && test_nodes.size() == 1) {
        const plain_json& problems = array_at(test, "problems");
        const std::string why = !problems.empty() && problems.front().is_string() ? problems.front().get<std::string>()
                                                                                  : std::string("failed");
        lone_failures.emplace(*test_nodes.begin(), fmt::format("test {} on this node alone: {}", test_name, why));
      }
      const auto localisation = test.find("localisation");
      if (localisation != test.end() && localisation->is_object()) {
        for (const auto& host : array_at(*localisation, "hosts")) {
          blame_agent(string_member(host, "agent"),
                      fmt::format("test {}: {}", test_name, string_member(host, "problem")));
        }
        const plain_json& flows = array_at(*localisation, "flows");
        for (const auto& suspect : array_at(*localisation, "suspects")) {
          if (string_member(suspect, "confidence") == "low") continue;
          const std::string link = string_member(suspect, "link");
          const std::string fault = fmt::format("test {}: {} on {}", test_name, string_member(suspect, "kind"),
                                                string_member(suspect, "name"));
          bool host_cable = false;
          for (const auto& flow : flows) {
            const plain_json& links = array_at(flow, "links");
            if (links.empty()) continue;
            if (links.front() == link) {
              blame_agent(string_member(flow, "sender"), fault);
              host_cable = true;
            }
            if (links.back() == link) {
              blame_agent(string_member(flow, "receiver"), fault);
              host_cable = true;
            }
          }
          if (!host_cable) network.insert(printable(string_member(suspect, "name")));
        }
      }
      const auto optics = test.find("optics");
      if (optics != test.end() && optics->is_object()) {
        for (const auto& port : array_at(*optics, "ports")) {
          const auto failed = port.is_object() ? port.find("failed") : port.end();
          if (failed == port.end() || !failed->is_boolean() || !failed->get<bool>()) continue;
          blame_agent(string_member(port, "agent"),
                      fmt::format("test {}: optics failed on {}", test_name, string_member(port, "title")));
        }
      }
    });
  }
  // After the narrower faults, so a node's reason names what failed rather than the test.
  for (const auto& [node, fault] : lone_failures) {
    if (!blame.faults.contains(node)) blame.faults.emplace(node, cut_utf8(printable(fault), kMaxFaultBytes));
  }
  blame.network.assign(network.begin(), network.end());
  for (const auto& node : blame.nodes) {
    if (!blame.faults.contains(node) && !failed_streams.contains(node) && !disconnected.contains(node) &&
        !unjudged.contains(node)) {
      blame.passed.push_back(node);
    }
  }
  return blame;
}

}  // namespace tusk
