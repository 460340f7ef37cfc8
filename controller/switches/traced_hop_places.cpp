#include "controller/switches/traced_hop_places.hpp"

#include <fmt/format.h>

#include <arpa/inet.h>

#include <cstdint>
#include <optional>
#include <set>
#include <unordered_map>

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

// What one hop of one path says of its address: the device, and the port the probe came in on.
struct Sighting {
  std::string device, interface, before;
};

// The cables and the switches' port subnets: where a hop after a placed one can be.
class Fabric {
 public:
  Fabric(const Fabric&) = delete;  // between_ points into cabled_'s keys
  Fabric& operator=(const Fabric&) = delete;
  Fabric(const std::vector<std::pair<LinkEnd, LinkEnd>>& cables, const std::vector<PortPrefix>& prefixes) {
    for (const auto& [a, b] : cables) {
      across_.emplace(a.text(), b);
      across_.emplace(b.text(), a);
      if (a.device == b.device) continue;
      cabled_[a.device][b.device].insert(a.interface);
      cabled_[b.device][a.device].insert(b.interface);
    }
    for (const auto& prefix : prefixes) {
      const auto bits = ipv4_bits(prefix.address);
      if (!bits || prefix.length == 0 || prefix.length >= 32) continue;  // a /32 (a loopback) is no link
      const std::uint32_t mask = ~0u << (32 - prefix.length);
      subnets_[prefix.port.device].push_back({*bits & mask, mask, prefix.port.interface});
    }
  }

  // Where the hop at `address` is, after one on device `before` and before one on device `after`
  // (nullptr while that hop is unplaced): across the cable from before's port whose subnet holds
  // the address, else on the one device cabled to both.
  std::optional<Sighting> sight(const std::string& before, const std::string& address, const std::string* after) {
    if (const auto far = across_subnet(before, address)) return Sighting{far->device, far->interface, before};
    if (!after || before == *after) return std::nullopt;
    const std::string* device = between(before, *after);
    if (!device) return std::nullopt;
    const auto& facing = cabled_[*device][before];
    return Sighting{*device, facing.size() == 1 ? *facing.begin() : std::string(), before};
  }

 private:
  // The far end of the cable from `device`'s port whose subnet holds `address`, if exactly one.
  std::optional<LinkEnd> across_subnet(const std::string& device, const std::string& address) const {
    const auto bits = ipv4_bits(address);
    const auto own = subnets_.find(device);
    if (!bits || own == subnets_.end()) return std::nullopt;
    std::optional<LinkEnd> found;
    for (const auto& subnet : own->second) {
      if ((*bits & subnet.mask) != subnet.network) continue;
      const auto far = across_.find(device + ":" + subnet.interface);
      if (far == across_.end() || (found && found->text() != far->second.text())) return std::nullopt;
      found = far->second;
    }
    return found;
  }

  // The one device cabled to both `near` and `far`, if exactly one. Agents' LLDP may cable a device
  // to as many as they like, so the answer is kept for each pair and found from the fewer cables.
  const std::string* between(const std::string& near, const std::string& far) {
    const auto [known, added] = between_.try_emplace({near, far});
    if (!added) return known->second;
    const auto from = cabled_.find(near), to = cabled_.find(far);
    if (from == cabled_.end() || to == cabled_.end()) return nullptr;
    const bool fewer_near = from->second.size() <= to->second.size();
    const auto& walked = fewer_near ? from->second : to->second;
    const auto& other = fewer_near ? to->second : from->second;
    const std::string* one = nullptr;
    for (const auto& [device, interfaces] : walked) {
      if (device == far || !other.contains(device)) continue;
      if (one) return known->second = nullptr;
      one = &device;
    }
    return known->second = one;
  }

  // device -> the devices cabled to it -> its interfaces on those cables
  std::map<std::string, std::map<std::string, std::set<std::string>>> cabled_;
  std::map<std::string, LinkEnd> across_;               // "device:interface" -> the cable's other end
  std::map<std::string, std::vector<Subnet>> subnets_;  // device -> its ports' point-to-point subnets
  // (near, far) -> between()'s answer: a key of one of cabled_'s inner maps, or nullptr. The pointers
  // stay valid: std::map never moves its nodes, cabled_ is filled in the constructor and nothing is
  // ever erased from it, and a Fabric is never copied (deleted above).
  std::map<std::pair<std::string, std::string>, const std::string*> between_;
};

// A path's addresses in order, the hosts at either end: `at(path, 0)` is its source.
const std::string& at(const TracedPath& path, std::size_t position) {
  if (position == 0) return path.source;
  return position > path.hops.size() ? path.destination : path.hops[position - 1];
}

using Spot = std::pair<std::size_t, std::size_t>;  // a path and a position in it

// The devices and ingress ports (interface, device before) one round's hops put an address on.
struct Seen {
  std::set<std::string> devices;
  std::set<std::pair<std::string, std::string>> ports;
};

}  // namespace

// What a hop says of its address hangs only on its neighbours' devices, which never change once
// placed, and each round places every address a hop spoke of or finds it ambiguous. So after a
// first look at every hop, a round looks again only beside the hops the round before placed: each
// hop is looked at a few times however long the chain of hops each placed by the one before (a
// look at every path each round was quadratic in it), and each round still places what one that
// looked at every hop would, in address order.
TracedHopPlaces place_traced_hops(const std::vector<TracedPath>& paths,
                                  const std::map<std::string, std::string>& address_device,
                                  const std::vector<std::pair<LinkEnd, LinkEnd>>& cables,
                                  const std::vector<PortPrefix>& prefixes) {
  Fabric fabric(cables, prefixes);
  std::unordered_map<std::string, std::string> known(address_device.begin(), address_device.end());
  std::unordered_map<std::string, std::vector<Spot>> spots;  // address -> where the paths have it
  for (std::size_t p = 0; p < paths.size(); ++p) {
    for (std::size_t i = 0; i <= paths[p].hops.size() + 1; ++i) {
      if (const std::string& address = at(paths[p], i); !address.empty()) spots[address].emplace_back(p, i);
    }
  }
  TracedHopPlaces out;
  std::set<std::string> ambiguous;
  std::map<std::string, Seen> seen;  // this round's, by address
  const auto look = [&](const Spot& spot) {
    const TracedPath& path = paths[spot.first];
    const std::string& address = at(path, spot.second);
    if (address.empty() || known.contains(address) || ambiguous.contains(address)) return;
    const auto before = known.find(at(path, spot.second - 1));
    if (before == known.end()) return;
    const auto after = known.find(at(path, spot.second + 1));
    const auto sighting = fabric.sight(before->second, address, after == known.end() ? nullptr : &after->second);
    if (!sighting) return;
    seen[address].devices.insert(sighting->device);
    seen[address].ports.emplace(sighting->interface, sighting->before);
  };
  for (std::size_t p = 0; p < paths.size(); ++p) {
    for (std::size_t i = 1; i <= paths[p].hops.size(); ++i) look({p, i});
  }
  while (!seen.empty()) {
    std::vector<Spot> beside;  // the hops next to those placed this round
    for (const auto& [address, on] : seen) {
      if (on.devices.size() != 1) {
        ambiguous.insert(address);
        continue;
      }
      HopPlace place{address, *on.devices.begin(), on.ports.size() == 1 ? on.ports.begin()->first : std::string(),
                     on.ports.begin()->second};
      known[address] = place.device;
      out.placed.push_back(std::move(place));
      for (const auto& [p, i] : spots[address]) {
        if (i > 1) beside.emplace_back(p, i - 1);
        if (i < paths[p].hops.size()) beside.emplace_back(p, i + 1);
      }
    }
    seen.clear();
    for (const auto& spot : beside) look(spot);
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
