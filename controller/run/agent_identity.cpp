#include "controller/run/agent_identity.hpp"

#include <fmt/format.h>

#include <algorithm>

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
                      printable(cut_utf8(hostname, 253))),
          true, true};
}

}  // namespace tusk
