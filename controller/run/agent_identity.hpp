// Which node an agent is on, as far as anything proves it. A node is the host a run's actions
// drain, taint or resume (by its short name, as Slurm and Kubernetes call it: report_blame.hpp)
// and its clock treats as one host: so it is taken from what the agent's certificate proves, never from the
// hostname the agent reports alone. The certificate proves its name (the hello checks that its
// common name is the agent's name) and any DNS names it carries; a reported hostname that is one
// of those is the node, any other is refused and the certified name is the node instead.
// Without TLS nothing is proven: the reported hostname stands, and the node says so. An operator's
// map of agents to nodes overrides all of it, for agents not named as their host whose certificates
// do not carry the host's name.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tusk {

struct AgentNode {
  std::string node;   // a hostname, or the agent's certified name
  std::string proof;  // what makes it this agent's node, for the report and the log
  bool proven = false;
  bool hostname_refused = false;  // the agent reported a hostname its certificate does not name
};

// `certified`: the peer certificate's common name, then its DNS subject alternative names (empty
// without TLS).
AgentNode node_of_agent(const std::string& agent, const std::string& hostname, bool encrypted,
                        const std::vector<std::string>& certified);

// The node an operator's map (--agent-nodes) gives the agent: the operator's word, over any
// hostname it reports. Proven as far as the agent's name is: by its certificate, or not without TLS.
AgentNode node_of_mapped_agent(const std::string& node, const std::string& hostname, bool encrypted);

// An operator's agent -> node map: one `AGENT NODE` a line, '#' comments and blank lines skipped.
// Throws std::invalid_argument naming the file and line of anything else (a name that is not a
// host's or an agent's, an agent listed twice, more than kMaxAgentNodes lines).
std::map<std::string, std::string> load_agent_nodes(const std::string& path);
inline constexpr std::size_t kMaxAgentNodes = 100'000;

// A hostname up to its first dot: the name a scheduler knows a node by.
std::string short_host_name(const std::string& hostname);

}  // namespace tusk
