#include "controller/switches/topology_commands.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <stdexcept>

#include "common/exit_codes.hpp"
#include "controller/switches/report_evidence.hpp"
#include "controller/switches/snmp_credentials.hpp"
#include "controller/switches/switch_poller.hpp"
#include "controller/switches/switch_queries.hpp"
#include "controller/switches/topology_discovery.hpp"

namespace tusk {

TopologyCommands::TopologyCommands(CLI::App& app) {
  topology_ = app.add_subcommand("topology", "work with topology files");
  topology_->require_subcommand(1);
  discover_ = topology_->add_subcommand(
      "discover",
      "write the topology that the switches' LLDP and addresses (read over SNMP) and the hosts' LLDP and the "
      "flows' traced hops (from a run's report.json) show");
  discover_->add_option("seed", seed_,
                        "topology YAML giving the switches their management addresses (and hosts their ports)");
  discover_->add_option("--snmp-credentials", credentials_, "SNMP credentials YAML the seed's snmp names refer to");
  discover_->add_option(
      "--report", reports_,
      "a run's report.json: each agent's ports' LLDP neighbours become host cables, its traced hops place "
      "switch addresses (repeatable)");
  discover_->add_option("--out", out_file_, "write the file here (default: standard output)");
  discover_->footer(
      "Give a seed with --snmp-credentials to read switches, --report to add what hosts heard, or both. "
      "Exit status: 0 when a switch was read or a host port heard a neighbour, 1 when none, 2 for a usage error "
      "or a bad seed, credentials or report file.");
}

std::optional<int> TopologyCommands::run_chosen(std::ostream& out, std::ostream& err) const {
  if (!discover_->parsed()) return std::nullopt;
  return discover(out, err);
}

int TopologyCommands::discover(std::ostream& out, std::ostream& err) const {
  std::vector<SwitchQuery> queries;
  DiscoveryInput input;
  try {
    if (!seed_.empty()) input.seed = load_topology_file(seed_);
    if (!credentials_.empty()) {
      if (seed_.empty()) throw std::runtime_error("--snmp-credentials: give the seed that names the switches");
      queries = switch_queries(input.seed, load_snmp_credentials_file(credentials_), credentials_);
    }
    for (const auto& report : reports_) {
      ReportEvidence evidence = report_evidence(report);
      input.hosts.insert(input.hosts.end(), std::make_move_iterator(evidence.hosts.begin()),
                         std::make_move_iterator(evidence.hosts.end()));
      input.paths.insert(input.paths.end(), std::make_move_iterator(evidence.paths.begin()),
                         std::make_move_iterator(evidence.paths.end()));
    }
  } catch (const std::exception& e) {
    err << e.what() << "\n";
    return kExitUsage;
  }
  if (queries.empty() && reports_.empty()) {
    err << (seed_.empty() || credentials_.empty()
                ? std::string("topology discover: give a seed with --snmp-credentials, or --report, or both\n")
                : fmt::format("{}: no device has a management address to read\n", seed_));
    return kExitUsage;
  }
  for (auto& query : queries) {  // its LLDP, port names and addresses are all discovery needs
    query.ports.clear();
    query.addresses = true;
  }
  input.readings = read_switches(queries);
  const DiscoveredTopology found = discover_topology(input);
  for (const auto& note : found.notes) err << "topology discover: " << note << "\n";
  err << fmt::format(
      "topology discover: {} of {} switches read, {} host ports heard a neighbour, {} cables, {} addresses placed "
      "from {} traced paths\n",
      found.switches_read, queries.size(), found.host_ports, found.links, found.traced_addresses, input.paths.size());
  if (out_file_.empty()) {
    out << found.yaml;
  } else {
    std::ofstream file(out_file_);
    file << found.yaml;
    if (!file) {
      err << fmt::format("--out: cannot write {}\n", out_file_);
      return kExitUsage;
    }
  }
  return found.switches_read + found.host_ports > 0 ? kExitPass : kExitThresholdFailed;
}

}  // namespace tusk
