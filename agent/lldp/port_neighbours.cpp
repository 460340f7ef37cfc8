#include "agent/lldp/port_neighbours.hpp"

#include <fmt/format.h>

#include "agent/lldp/lldpcli_json.hpp"
#include "common/command_output.hpp"

namespace tusk::lldp {

PortNeighbours read_port_neighbours(const LldpcliSource& source, const std::vector<std::string>& interfaces) {
  PortNeighbours result;
  if (interfaces.empty()) return result;
  std::vector<std::string> argv{source.program};
  if (!source.socket.empty()) argv.insert(argv.end(), {"-u", source.socket});
  argv.insert(argv.end(), {"-f", "json", "show", "neighbors"});
  const CommandOutput output = run_command(argv, source.timeout, kMaxLldpcliOutputBytes);
  if (!output.ok()) {
    const std::string failure = output.failure(source.program);
    // Debian's lldpd installs lldpcli for root and group adm (setuid _lldpd, which a service
    // with NoNewPrivileges does not get) and its socket for group _lldpd.
    const bool refused = failure.find("Permission denied") != std::string::npos;
    result.notes.push_back(fmt::format(
        "no LLDP neighbours: {}{}", failure,
        refused ? " (lldpcli runs for groups adm and _lldpd: adduser _tusk adm; adduser _tusk _lldpd)" : ""));
    return result;
  }
  try {
    // Of several neighbours on one port, the youngest: the one there now after a cable moved.
    for (auto& [interface, neighbour] : parse_lldpcli_neighbours(output.out)) {
      const auto [known, added] = result.by_interface.emplace(interface, neighbour);
      if (!added && neighbour.age_s < known->second.age_s) known->second = std::move(neighbour);
    }
  } catch (const LldpcliOutputError& error) {
    result.notes.push_back(fmt::format("no LLDP neighbours: {}", error.what()));
    return result;
  }
  for (const auto& interface : interfaces) {
    if (!result.by_interface.contains(interface)) {
      result.notes.push_back(fmt::format("no LLDP neighbour on {} (lldpd has heard none there)", interface));
    }
  }
  return result;
}

}  // namespace tusk::lldp
