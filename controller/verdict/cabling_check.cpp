#include "controller/verdict/cabling_check.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

namespace tusk {
namespace {

// Who a neighbour says it is, as a topology end: its system name and its port, by the port id or,
// when the id is a MAC (lldpd's default), by the port description.
struct NeighbourEnd {
  std::string device, port;
  std::string text() const { return device + ":" + port; }
};

NeighbourEnd end_of(const SwitchLldpNeighbour& neighbour, const FabricTopology& topology) {
  NeighbourEnd out{neighbour.system_name, neighbour.port_id};
  for (const auto& device : topology.devices()) {
    if (device.name != neighbour.system_name) continue;
    for (const auto& interface : device.interfaces) {
      if (interface.name == neighbour.port_id) return out;
    }
    for (const auto& interface : device.interfaces) {
      if (interface.name == neighbour.port_description) return {neighbour.system_name, neighbour.port_description};
    }
  }
  if (out.port.empty()) out.port = neighbour.port_description;
  return out;
}

}  // namespace

const char* lldp_source_name(const std::string& source) {
  if (source == "lldpd") return "lldpd";
  if (source == "frames") return "frames";
  return "";
}

const char* to_string(CablingFinding::Kind kind) {
  switch (kind) {
    case CablingFinding::Kind::Elsewhere:
      return "lands elsewhere";
    case CablingFinding::Kind::NoNeighbour:
      return "no neighbour";
    case CablingFinding::Kind::NotInFile:
      return "not in the topology file";
  }
  return "?";
}

std::string CablingFinding::text() const {
  switch (kind) {
    case Kind::Elsewhere:
      return fmt::format("{}:{} should be cabled to {} but LLDP finds {} ({})", device, port, expected, found, source);
    case Kind::NoNeighbour:
      return fmt::format("{}:{} should be cabled to {} but has no LLDP neighbour ({})", device, port, expected, source);
    case Kind::NotInFile:
      return fmt::format("{}:{} is cabled to {}, which the topology file does not have ({})", device, port, found,
                         source);
  }
  return {};
}

CablingCheck cabling_not_checked(std::string why) {
  CablingCheck check;
  check.not_checked = std::move(why);
  return check;
}

std::string CablingCheck::text() const {
  if (!checked()) {
    return fmt::format("cabling: not checked: {}", not_checked);
  }
  std::string out = fmt::format("cabling: {} of {} ports checked by LLDP are where the topology file says",
                                ends_matched, ends_checked);
  if (!findings.empty()) out += fmt::format("; {} not: {}", findings.size(), findings.front().text());
  if (findings.size() > 1) out += fmt::format(" (and {} more)", findings.size() - 1);
  if (!unverified.empty())
    out += fmt::format("; {} host cables unverified (the hosts send no LLDP)", unverified.size());
  if (!unreadable.empty()) out += fmt::format("; {} switches' LLDP could not be read", unreadable.size());
  return out;
}

CablingCheck check_cabling(const FabricTopology& topology, const std::vector<SwitchReading>& switches,
                           const std::vector<HostLldp>& hosts) {
  CablingCheck check;
  std::set<std::pair<std::string, std::string>> seen;  // every cable LLDP shows, from either end
  const auto seen_cable = [&](const std::string& a, const std::string& b) { seen.insert(std::minmax(a, b)); };
  // The hosts' side first: a host port the file places, against the cable the file gives it.
  std::set<std::string> host_checked;  // "device:interface" of host ends checked here
  for (const auto& host : hosts) {
    const auto place = topology.find(host.address);
    if (!place || place->interface.empty()) continue;
    const LinkEnd here{place->device, place->interface};
    const TopologyLink* cable = nullptr;
    for (const auto& link : topology.links()) {
      if (link.a.text() == here.text() || link.b.text() == here.text()) cable = &link;
    }
    if (!cable) continue;
    const LinkEnd& there = cable->a.text() == here.text() ? cable->b : cable->a;
    host_checked.insert(here.text());
    ++check.ends_checked;
    const NeighbourEnd end = end_of(host.neighbour, topology);
    seen_cable(here.text(), end.text());
    const std::string source =
        fmt::format("LLDP{} at agent {}, port {}", host.from_frames ? " frames" : "", host.agent, host.netdev);
    if (end.device == there.device && end.port == there.interface) {
      ++check.ends_matched;
    } else {
      check.findings.push_back(
          {CablingFinding::Kind::Elsewhere, here.device, here.interface, there.text(), end.text(), source});
    }
  }
  std::map<std::string, const SwitchReading*> read;
  for (const auto& reading : switches) {
    if (reading.ok() && reading.lldp_read) {
      read.emplace(reading.device, &reading);
    } else {
      check.unreadable.push_back(reading.ok() ? reading.device : reading.error);
    }
  }
  std::set<std::string> managed;
  for (const auto& device : topology.devices()) {
    if (device.management) managed.insert(device.name);
  }
  std::set<std::string> cabled_ends;
  for (const auto& link : topology.links()) {
    cabled_ends.insert(link.a.text());
    cabled_ends.insert(link.b.text());
    for (const auto& [here, there] : {std::pair{&link.a, &link.b}, std::pair{&link.b, &link.a}}) {
      const auto reading = read.find(here->device);
      if (reading == read.end()) continue;
      ++check.ends_checked;
      const std::string source = fmt::format("LLDP-MIB of {}", here->device);
      std::vector<NeighbourEnd> found;
      for (const auto& neighbour : reading->second->lldp) {
        if (neighbour.local_port == here->interface) found.push_back(end_of(neighbour, topology));
      }
      bool matched = false;
      for (const auto& end : found) {
        seen_cable(here->text(), end.text());
        matched = matched || (end.device == there->device && end.port == there->interface);
      }
      if (matched) {
        ++check.ends_matched;
      } else if (!found.empty()) {
        check.findings.push_back({CablingFinding::Kind::Elsewhere, here->device, here->interface, there->text(),
                                  found.front().text(), source});
      } else if (managed.contains(there->device)) {
        check.findings.push_back(
            {CablingFinding::Kind::NoNeighbour, here->device, here->interface, there->text(), "", source});
      } else if (!host_checked.contains(there->text())) {
        check.unverified.push_back(fmt::format("{} <-> {}", here->text(), there->text()));
      }
    }
  }
  // Neighbours on ports the file cables to nothing.
  for (const auto& [device, reading] : read) {
    for (const auto& neighbour : reading->lldp) {
      const std::string here = fmt::format("{}:{}", device, neighbour.local_port);
      if (cabled_ends.contains(here)) continue;
      const NeighbourEnd end = end_of(neighbour, topology);
      seen_cable(here, end.text());
      check.findings.push_back({CablingFinding::Kind::NotInFile, device, neighbour.local_port, "", end.text(),
                                fmt::format("LLDP-MIB of {}", device)});
    }
  }
  std::set<std::pair<std::string, std::string>> in_file;
  for (const auto& link : topology.links()) {
    const std::string a = link.a.text(), b = link.b.text();
    in_file.insert(std::minmax(a, b));
  }
  for (const auto& [a, b] : seen) check.seen.push_back({a, b, in_file.contains({a, b})});
  if (!check.checked()) {
    check.not_checked = check.unreadable.empty()
                            ? "no port the topology file cables was heard by LLDP (no switch read, no host port placed)"
                            : fmt::format("no switch's LLDP could be read ({})", fmt::join(check.unreadable, "; "));
  }
  return check;
}

}  // namespace tusk
