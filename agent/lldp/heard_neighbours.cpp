#include "agent/lldp/heard_neighbours.hpp"

namespace tusk::lldp {

bool HeardNeighbours::heard(const std::string& port, const LldpNeighbour& neighbour, Clock::time_point at) {
  std::lock_guard lock(mutex_);
  const auto known = by_port_.find(port);
  if (neighbour.ttl_s == 0) {
    if (known == by_port_.end()) return false;
    by_port_.erase(known);
    return true;
  }
  const bool changed = known == by_port_.end() || known->second.neighbour.chassis_id != neighbour.chassis_id ||
                       known->second.neighbour.port_id != neighbour.port_id ||
                       known->second.neighbour.system_name != neighbour.system_name;
  by_port_[port] = {neighbour, at};
  return changed;
}

std::optional<LldpNeighbour> HeardNeighbours::neighbour(const std::string& port, Clock::time_point now) const {
  std::lock_guard lock(mutex_);
  const auto found = by_port_.find(port);
  if (found == by_port_.end()) return std::nullopt;
  if (now - found->second.at > std::chrono::seconds(found->second.neighbour.ttl_s)) return std::nullopt;
  return found->second.neighbour;
}

}  // namespace tusk::lldp
