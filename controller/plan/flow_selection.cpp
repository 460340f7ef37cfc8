#include "controller/plan/flow_selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

namespace tusk {

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
      const std::string text = flow.value("flow", "");  // "192.168.101.11:49152 > ... udp"
      const auto colon = text.find(':');
      const auto space = text.find(' ');
      std::uint32_t port = 0;
      if (colon != std::string::npos && space != std::string::npos && space > colon) {
        port = static_cast<std::uint32_t>(std::stoul(text.substr(colon + 1, space - colon - 1)));
      }
      selection.by_test[test["name"].get<std::string>()].push_back(
          {flow.value("sender", ""), flow.value("receiver", ""), port});
    }
  }
  if (!localised) throw std::runtime_error("the report has no localisation: its tests traced no routed flows");
  if (selection.by_test.empty()) {
    throw std::runtime_error(fmt::format("no flow in the report crossed '{}'; its links: {}", link,
                                         links_seen.empty() ? "none" : fmt::format("{}", fmt::join(links_seen, "; "))));
  }
  return selection;
}

void restrict_plans(std::vector<AgentPlan>& plans, const std::vector<SelectedFlow>& flows) {
  for (auto& agent_plan : plans) {
    proto::Plan& plan = agent_plan.plan;
    const std::string& agent = agent_plan.agent;
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
