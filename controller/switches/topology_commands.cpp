#include "controller/switches/topology_commands.hpp"

#include <fmt/format.h>

#include <fstream>

#include "controller/outcome/run_outcome.hpp"
#include "controller/switches/snmp_credentials.hpp"
#include "controller/switches/switch_poller.hpp"
#include "controller/switches/switch_queries.hpp"
#include "controller/switches/topology_discovery.hpp"

namespace tusk {

TopologyCommands::TopologyCommands(CLI::App& app) {
  topology_ = app.add_subcommand("topology", "work with topology files");
  topology_->require_subcommand(1);
  discover_ = topology_->add_subcommand(
      "discover", "write the topology the switches' LLDP shows, from a seed file that gives them management addresses");
  discover_->add_option("seed", seed_, "topology YAML with at least the switches and their management")->required();
  discover_->add_option("--snmp-credentials", credentials_, "SNMP credentials YAML the seed's snmp names refer to")
      ->required();
  discover_->add_option("--out", out_file_, "write the file here (default: standard output)");
  discover_->footer(
      "Exit status: 0 when a switch was read, 1 when none could be, 2 for a usage error or a bad seed or "
      "credentials file.");
}

std::optional<int> TopologyCommands::run_chosen(std::ostream& out, std::ostream& err) const {
  if (!discover_->parsed()) return std::nullopt;
  return discover(out, err);
}

int TopologyCommands::discover(std::ostream& out, std::ostream& err) const {
  std::vector<SwitchQuery> queries;
  FabricTopology seed;
  try {
    seed = load_topology_file(seed_);
    queries = switch_queries(seed, load_snmp_credentials_file(credentials_), credentials_);
  } catch (const std::exception& e) {
    err << e.what() << "\n";
    return kExitUsage;
  }
  if (queries.empty()) {
    err << fmt::format("{}: no device has a management address to read\n", seed_);
    return kExitUsage;
  }
  for (auto& query : queries) query.ports.clear();  // its LLDP and port names are all discovery needs
  const DiscoveredTopology found = discover_topology(seed, read_switches(queries));
  for (const auto& note : found.notes) err << "topology discover: " << note << "\n";
  err << fmt::format("topology discover: {} of {} switches read, {} cables\n", found.switches_read, queries.size(),
                     found.links);
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
  return found.switches_read > 0 ? kExitPass : kExitThresholdFailed;
}

}  // namespace tusk
