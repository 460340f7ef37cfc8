// Where the hops of traced paths are, for topology discover. A router answers time-exceeded from
// the port the probe came in on (as Linux and most switches do), so a hop that answered from an
// address nobody placed is:
// - at the far end of the cable from the hop before's port whose subnet holds the address (a
//   point-to-point link's two ends share one), when the hop before's device and its port
//   prefixes are known;
// - else, between two placed hops (or a host and a hop), on the one device cabled to both of
//   theirs, at the port facing the hop before when exactly one cable joins them.
// Placing one hop can place the next, so it goes round until nothing more is placed.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "controller/topology/fabric_topology.hpp"

namespace tusk {

// One flow's traced path: its two hosts' addresses and the address that answered each TTL from 1
// ("" where none did).
struct TracedPath {
  std::string source, destination;
  std::vector<std::string> hops;
};

struct HopPlace {
  std::string address;
  std::string device;
  std::string interface;  // "" when more than one cable joins it to the hop before
  std::string before;     // the device of the hop before, for a note
};

struct TracedHopPlaces {
  std::vector<HopPlace> placed;
  std::vector<std::string> notes;  // hops that two paths place on different devices, hops left unplaced
};

// A port's address with its prefix length, as its switch gives it.
struct PortPrefix {
  LinkEnd port;
  std::string address;
  unsigned length = 32;
};

// `address_device`: the device of every address already placed; `cables`: every cable's two ends.
TracedHopPlaces place_traced_hops(const std::vector<TracedPath>& paths,
                                  const std::map<std::string, std::string>& address_device,
                                  const std::vector<std::pair<LinkEnd, LinkEnd>>& cables,
                                  const std::vector<PortPrefix>& prefixes = {});

}  // namespace tusk
