// tusk-controller's `topology discover`: reads every switch a seed topology file gives a
// management address (over SNMP, as a run does) and what the hosts heard on their ports (a run's
// report.json), and writes the topology their LLDP shows, for a person to review. controller_main makes a
// TopologyCommands before parsing and asks it to run after.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tusk {

class TopologyCommands {
 public:
  explicit TopologyCommands(CLI::App& app);
  TopologyCommands(const TopologyCommands&) = delete;
  TopologyCommands& operator=(const TopologyCommands&) = delete;

  // The exit code of `topology discover` when it was chosen; nullopt otherwise.
  std::optional<int> run_chosen(std::ostream& out, std::ostream& err) const;

 private:
  int discover(std::ostream& out, std::ostream& err) const;

  CLI::App* topology_ = nullptr;
  CLI::App* discover_ = nullptr;
  std::string seed_;
  std::string credentials_;
  std::vector<std::string> reports_;
  std::string out_file_;
};

}  // namespace tusk
