#include "controller/plan/flow_selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <stdexcept>
#include <tuple>

#include "common/json_text.hpp"
#include "common/loopback_peer.hpp"

namespace tusk {
namespace {

// The source port of a flow as the report writes it, "192.168.101.11:49152 > 192.168.102.11:4791
// udp"; 0 when it has none.
std::uint32_t source_port_of(const std::string& text) {
  const auto colon = text.find(':');
  const auto space = text.find(' ');
  if (colon == std::string::npos || space == std::string::npos || space <= colon + 1) return 0;
  std::uint32_t port = 0;
  const auto [end, error] = std::from_chars(text.data() + colon + 1, text.data() + space, port);
  return error == std::errc() && end == text.data() + space && port <= 65535 ? port : 0;
}

}  // namespace

FlowSelection select_flows_through(const nlohmann::json& report, const std::string& link) {
  FlowSelection selection;
  selection.link = link;
  std::set<std::string> links_seen;
  bool localised = false;
  if (!report.is_object() || !report.contains("tests") || !report["tests"].is_array()) {
    throw std::runtime_error("not a Tusk report.json: it has no tests");
  }
  for (const auto& test : report["tests"]) {
    if (!test.is_object() || !test.contains("localisation") || !test.contains("name")) continue;
    localised = true;
    for (const auto& flow : test["localisation"].value("flows", nlohmann::json::array())) {
      const auto links = flow.value("links", std::vector<std::string>{});
      links_seen.insert(links.begin(), links.end());
      const bool crossed = std::any_of(links.begin(), links.end(), [&](const std::string& key) {
        return key == link || link.rfind(key + ",", 0) == 0;  // the key, or its name with the cable
      });
      if (!crossed) continue;
      selection.by_test[test["name"].get<std::string>()].push_back(
          {flow.value("sender", ""), flow.value("receiver", ""), source_port_of(flow.value("flow", ""))});
    }
  }
  if (!localised) throw std::runtime_error("the report has no localisation: its tests traced no routed flows");
  if (selection.by_test.empty()) {
    throw std::runtime_error(fmt::format("no flow in the report crossed '{}'; its links: {}", link,
                                         links_seen.empty() ? "none" : fmt::format("{}", fmt::join(links_seen, "; "))));
  }
  return selection;
}

FlowSelection select_failing_flows(const nlohmann::json& report) {
  using nlohmann::json;
  if (!report.is_object() || !report.contains("tests") || !report["tests"].is_array()) {
    throw std::runtime_error("not a Tusk report.json: it has no tests");
  }
  FlowSelection selection;
  selection.link = "failing";
  const auto failed = [](const json& object) {
    const auto passed = object.is_object() ? object.find("passed") : object.end();
    return passed != object.end() && passed->is_boolean() && !passed->get<bool>();
  };
  for (const auto& test : report["tests"]) {
    const std::string name = string_member(test, "name");
    if (name.empty() || string_member(test, "verdict") == "pass" || test.contains("method")) continue;
    std::set<std::tuple<std::string, std::string, std::uint32_t>> flows;
    const auto add = [&](const std::string& sender, const std::string& receiver, std::uint32_t port) {
      if (!sender.empty() && !receiver.empty()) flows.emplace(sender, receiver, port);
    };
    const auto localisation = test.find("localisation");
    const bool routed = localisation != test.end() && localisation->is_object();
    if (routed) {
      for (const auto& flow : localisation->value("flows", json::array())) {
        if (failed(flow))
          add(string_member(flow, "sender"), string_member(flow, "receiver"),
              source_port_of(string_member(flow, "flow")));
      }
    }
    for (const auto& stream : test.value("streams", json::array())) {
      if (!failed(stream)) continue;
      const std::string agent = string_member(stream, "agent"), peer = string_member(stream, "peer");
      if (peer.empty() || peer == agent || peer == wire::kLoopbackPeer) {
        add(agent, agent, 0);
      } else if (!routed) {
        std::uint32_t port = 0;
        if (const auto flow = stream.find("flow"); flow != stream.end() && flow->is_object()) {
          // A report is a file anyone may have edited: a port that is none (70000, "x") names no
          // flow, and the pair is tested again as a whole.
          const auto& given = member_or_null(*flow, "src_port");
          if (given.is_number_unsigned() && given.get<std::uint64_t>() <= 65535) {
            port = static_cast<std::uint32_t>(given.get<std::uint64_t>());
          }
        }
        add(string_member(stream, "sender"), string_member(stream, "receiver"), port);
      }
    }
    if (flows.empty() && string_member(test, "verdict") == "fail") {
      for (const auto& agent : test.value("agents", json::array()))
        add(string_member(agent, "agent"), string_member(agent, "agent"), 0);
    }
    for (const auto& [sender, receiver, port] : flows) selection.by_test[name].push_back({sender, receiver, port});
  }
  if (selection.by_test.empty()) {
    throw std::runtime_error(fmt::format("nothing failed in run {}: nothing to re-test", report.value("run_id", "?")));
  }
  return selection;
}

void restrict_plans(std::vector<AgentPlan>& plans, const std::vector<SelectedFlow>& flows) {
  for (auto& agent_plan : plans) {
    proto::Plan& plan = agent_plan.plan;
    const std::string& agent = agent_plan.agent;
    const bool whole = std::any_of(flows.begin(), flows.end(), [&](const SelectedFlow& flow) {
      return flow.sender == agent && flow.receiver == agent;
    });
    if (whole) continue;
    const auto keep = [&](google::protobuf::RepeatedPtrField<proto::PeerEndpoint>& endpoints, bool as_sender) {
      google::protobuf::RepeatedPtrField<proto::PeerEndpoint> kept;
      for (auto& endpoint : endpoints) {
        std::set<std::uint32_t> ports;
        bool any = false;
        for (const auto& flow : flows) {
          const bool match = as_sender ? flow.sender == agent && flow.receiver == endpoint.agent_name()
                                       : flow.receiver == agent && flow.sender == endpoint.agent_name();
          if (!match) continue;
          any = true;
          if (flow.src_port != 0) ports.insert(flow.src_port);
        }
        if (!any) continue;
        proto::PeerEndpoint& out = *kept.Add();
        out = endpoint;
        if (as_sender && plan.has_dpdk()) out.mutable_source_ports()->Assign(ports.begin(), ports.end());
      }
      endpoints.Swap(&kept);
    };
    keep(*plan.mutable_peers(), true);
    keep(*plan.mutable_senders(), false);
    plan.set_idle(plan.peers().empty() && plan.senders().empty());
  }
}

}  // namespace tusk
