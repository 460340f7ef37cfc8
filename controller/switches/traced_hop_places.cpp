#include "controller/switches/traced_hop_places.hpp"

#include <fmt/format.h>

#include <arpa/inet.h>

#include <cstdint>
#include <optional>
#include <set>

namespace tusk {
namespace {

// The most hop addresses a note lists by name; the rest are counted.
constexpr std::size_t kNamedInNote = 5;

std::string listed(const std::set<std::string>& addresses) {
  std::string out;
  std::size_t named = 0;
  for (const auto& address : addresses) {
    if (named == kNamedInNote) break;
    out += (named++ ? ", " : "") + address;
  }
  if (addresses.size() > named) out += fmt::format(" and {} more", addresses.size() - named);
  return out;
}

std::optional<std::uint32_t> ipv4_bits(const std::string& address) {
  in_addr parsed{};
  if (inet_pton(AF_INET, address.c_str(), &parsed) != 1) return std::nullopt;
  return ntohl(parsed.s_addr);
}

struct Subnet {
  std::uint32_t network = 0, mask = 0;
  std::string interface;
};

}  // namespace

TracedHopPlaces place_traced_hops(const std::vector<TracedPath>& paths,
                                  const std::map<std::string, std::string>& address_device,
                                  const std::vector<std::pair<LinkEnd, LinkEnd>>& cables,
                                  const std::vector<PortPrefix>& prefixes) {
  // device -> the devices cabled to it -> its interfaces on those cables
  std::map<std::string, std::map<std::string, std::set<std::string>>> cabled;
  for (const auto& [a, b] : cables) {
    if (a.device == b.device) continue;
    cabled[a.device][b.device].insert(a.interface);
    cabled[b.device][a.device].insert(b.interface);
  }
  std::map<std::string, LinkEnd> across;  // "device:interface" -> the cable's other end
  for (const auto& [a, b] : cables) {
    across.emplace(a.text(), b);
    across.emplace(b.text(), a);
  }
  std::map<std::string, std::vector<Subnet>> subnets;  // device -> its ports' point-to-point subnets
  for (const auto& prefix : prefixes) {
    const auto bits = ipv4_bits(prefix.address);
    if (!bits || prefix.length == 0 || prefix.length >= 32) continue;  // a /32 (a loopback) is no link
    const std::uint32_t mask = ~0u << (32 - prefix.length);
    subnets[prefix.port.device].push_back({*bits & mask, mask, prefix.port.interface});
  }
  // The far end of the cable from `device`'s port whose subnet holds `address`, if exactly one.
  const auto across_subnet = [&](const std::string& device, const std::string& address) -> std::optional<LinkEnd> {
    const auto bits = ipv4_bits(address);
    const auto own = subnets.find(device);
    if (!bits || own == subnets.end()) return std::nullopt;
    std::optional<LinkEnd> found;
    for (const auto& subnet : own->second) {
      if ((*bits & subnet.mask) != subnet.network) continue;
      const auto far = across.find(device + ":" + subnet.interface);
      if (far == across.end() || (found && found->text() != far->second.text())) return std::nullopt;
      found = far->second;
    }
    return found;
  };
  std::map<std::string, std::string> known = address_device;
  TracedHopPlaces out;
  std::set<std::string> ambiguous;
  for (bool placed_more = true; placed_more;) {
    placed_more = false;
    // address -> the devices and ingress ports the paths put it on, this round
    std::map<std::string, std::set<std::string>> devices;
    std::map<std::string, std::set<std::pair<std::string, std::string>>> ports;  // (interface, device before)
    for (const auto& path : paths) {
      std::vector<const std::string*> sequence{&path.source};
      for (const auto& hop : path.hops) sequence.push_back(&hop);
      sequence.push_back(&path.destination);
      for (std::size_t i = 1; i + 1 < sequence.size(); ++i) {
        const std::string& address = *sequence[i];
        if (address.empty() || known.contains(address)) continue;
        const auto before = known.find(*sequence[i - 1]);
        if (before == known.end()) continue;
        if (const auto far = across_subnet(before->second, address)) {
          devices[address].insert(far->device);
          ports[address].emplace(far->interface, before->second);
          continue;
        }
        const auto after = known.find(*sequence[i + 1]);
        if (after == known.end() || before->second == after->second) continue;
        const auto near = cabled.find(before->second);
        if (near == cabled.end()) continue;
        std::vector<std::string> between;  // devices cabled to both
        for (const auto& [device, interfaces] : near->second) {
          const auto far = cabled.find(device);
          if (device != after->second && far != cabled.end() && far->second.contains(after->second)) {
            between.push_back(device);
          }
        }
        if (between.size() != 1) continue;
        devices[address].insert(between.front());
        const auto& facing = cabled[between.front()][before->second];
        ports[address].emplace(facing.size() == 1 ? *facing.begin() : std::string(), before->second);
      }
    }
    for (const auto& [address, on] : devices) {
      if (on.size() != 1) {
        ambiguous.insert(address);
        continue;
      }
      const auto& seen = ports[address];
      HopPlace place{address, *on.begin(), seen.size() == 1 ? seen.begin()->first : std::string(),
                     seen.begin()->second};
      known[address] = place.device;
      out.placed.push_back(std::move(place));
      placed_more = true;
    }
  }
  for (const auto& address : ambiguous) {
    if (known.contains(address)) continue;
    out.notes.push_back(fmt::format("traced hop {} is on different devices by different paths: not placed", address));
  }
  std::set<std::string> unplaced;
  for (const auto& path : paths) {
    for (const auto& hop : path.hops) {
      if (!hop.empty() && !known.contains(hop) && !ambiguous.contains(hop)) unplaced.insert(hop);
    }
  }
  if (!unplaced.empty()) {
    out.notes.push_back(fmt::format(
        "{} traced hop address{} placed on no device (no placed hop or host on both sides, or more than one "
        "device cabled to both): {}",
        unplaced.size(), unplaced.size() == 1 ? "" : "es", listed(unplaced)));
  }
  return out;
}

}  // namespace tusk
