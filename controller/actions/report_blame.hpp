// What a run's report.json blames, by node: the input of every action that takes a node out of
// service or returns it (controller/actions/). Read from the report, not the run's memory, so
// `tusk-controller act` acts on any earlier run the same way the run itself would.
//
// A node is an agent's host, by its short name (what Slurm and Kubernetes call it): the host the
// run proved from the agent's certificate (agents[].node, controller/run/agent_identity.hpp), not
// the hostname the agent reported. A node is blamed for:
// - a host problem localisation names (tests[].localisation.hosts[]);
// - a suspect link named with medium or high confidence that is a host's cable: the first link
//   of a flow the host sent, or the last of one it received;
// - a failing stream whose peer is itself (a loopback test: its port, cable or plug);
// - a port whose optics failed (tests[].optics.ports[].failed);
// - a test that failed on it alone, when nothing narrower names it (a loopback plug that returned
//   nothing fails on no stream).
// A named suspect that is no host's cable is the network team's. A node passes when it took part,
// was connected at the end, is blamed for nothing, every stream it measured passed and no test it
// was in failed as a whole (a problem of the test's, which judges none of its nodes).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace tusk {

struct RunBlame {
  std::string run_id;
  bool finished = false;                       // the run's own report, not a checkpoint
  std::vector<std::string> nodes;              // every node that took part, in the report's order
  std::map<std::string, std::string> faults;   // blamed node -> its first fault, one line
  std::vector<std::string> passed;             // nodes that passed
  std::vector<std::string> network;            // named suspects that are no host's cable
  std::map<std::string, std::string> node_of;  // agent name -> node
};

// Throws std::runtime_error naming `file` for a document that is not a Tusk report.
RunBlame blame_from_report(const nlohmann::json& report, const std::string& file);

// An agent's node: its hostname up to the first dot, else the agent's name.
std::string node_name(const std::string& hostname, const std::string& agent);

}  // namespace tusk
