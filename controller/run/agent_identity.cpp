#include "controller/run/agent_identity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "common/printable.hpp"

namespace tusk {

std::string short_host_name(const std::string& hostname) {
  return hostname.substr(0, hostname.find('.'));
}

AgentNode node_of_agent(const std::string& agent, const std::string& hostname, bool encrypted,
                        const std::vector<std::string>& certified) {
  const std::string host = short_host_name(hostname);
  if (!encrypted) {
    if (host.empty()) return {agent, "its name (no TLS: nothing proves it)", false, false};
    return {hostname, "its own hostname (no TLS: nothing proves it)", false, false};
  }
  const std::string certified_name = certified.empty() ? agent : certified.front();
  if (host.empty()) return {certified_name, "its certificate's name", true, false};
  const bool named = std::any_of(certified.begin(), certified.end(), [&](const std::string& name) {
    return name == hostname || short_host_name(name) == host;
  });
  if (named) return {hostname, "its hostname, which its certificate names", true, false};
  return {certified_name,
          fmt::format("its certificate's name: it reported the hostname '{}', which its certificate does not name",
                      cut_utf8(hostname, 253)),
          true, true};
}

AgentNode node_of_mapped_agent(const std::string& node, const std::string& hostname, bool encrypted) {
  std::string proof = encrypted ? "the operator's --agent-nodes map, for the agent its certificate names"
                                : "the operator's --agent-nodes map (no TLS: nothing proves the agent's name)";
  if (!hostname.empty() && short_host_name(hostname) != short_host_name(node)) {
    proof += fmt::format("; it reported the hostname '{}'", cut_utf8(hostname, 253));
  }
  return {node, std::move(proof), encrypted, false};
}

std::map<std::string, std::string> load_agent_nodes(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::invalid_argument(fmt::format("--agent-nodes {}: cannot read it", path));
  // An agent's name as make-certs.sh allows it; a node as DNS writes a host's name.
  static const std::regex agent_name(R"([A-Za-z0-9][A-Za-z0-9._-]{0,62})");
  static const std::regex host_name(R"([A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)");
  std::map<std::string, std::string> nodes;
  std::string line;
  for (std::size_t number = 1; std::getline(file, line); ++number) {
    const auto fail = [&](const std::string& what) {
      return std::invalid_argument(fmt::format("{}:{}: {}", path, number, what));
    };
    if (number > kMaxAgentNodes) throw fail(fmt::format("more than {} lines", kMaxAgentNodes));
    std::istringstream fields(line.substr(0, line.find('#')));
    std::string agent, node, extra;
    if (!(fields >> agent)) continue;
    if (!(fields >> node) || (fields >> extra)) throw fail("write one agent and its node: AGENT NODE");
    if (!std::regex_match(agent, agent_name)) {
      throw fail(
          fmt::format("'{}' is no agent's name (letters, digits, '.', '_', '-')", printable(cut_utf8(agent, 64))));
    }
    if (!std::regex_match(node, host_name)) {
      throw fail(fmt::format("'{}' is no host's name (letters, digits, '.', '-')", printable(cut_utf8(node, 64))));
    }
    if (!nodes.emplace(agent, node).second) throw fail(fmt::format("agent '{}' is listed twice", agent));
  }
  return nodes;
}

}  // namespace tusk
