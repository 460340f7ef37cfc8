// The topology file: the names people use for a fabric's devices, ports and cables, so a suspect
// link is reported as "leaf1:swp3 -> spine2:swp1, cable C-017" instead of two addresses.
//
//   devices:
//     leaf1:
//       interfaces:
//         swp3: 172.16.1.4          # an address, a list of them, or ~ (none, e.g. a bridge port)
//         vlan100: [192.168.101.1]
//     spine2:
//       interfaces: {swp1: 172.16.1.5}
//       management:                 # optional: where the controller reads the switch's counters
//         address: 10.0.0.12          #   and its LLDP neighbours over SNMP (controller/switches/)
//         snmp: fabric-ro             #   a name in --snmp-credentials FILE
//     host-a:                        # hosts too, by the agent's data-plane address
//       interfaces: {ens1f0: 192.168.101.11}
//   links:
//     - ends: leaf1:swp3 <-> spine2:swp1
//       cable: C-017                  # optional, as are optics (one per end, in ends' order)
//       optics: [OPT-4411, OPT-4412]
//     - host-a:ens1f0 <-> leaf1:swp10  # a link with nothing more to say
//
// Like profiles, every mistake in the file is reported at once as file:line:column: field: message.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/yaml_reader.hpp"

namespace tusk {

// `text` as a topology holds an IPv4 address (dotted quad as inet_ntop writes it); nullopt when
// it is not one.
std::optional<std::string> canonical_ipv4(const std::string& text);

struct TopologyInterface {
  std::string name;
  std::vector<std::string> addresses;  // IPv4, dotted quad as inet_ntop writes it
};

// A switch's management: the address its SNMP agent answers on, and which credentials it takes.
struct DeviceManagement {
  std::string address;    // IPv4, canonical
  std::string snmp;       // a name in the SNMP credentials file
  YamlPos snmp_pos;       // where `snmp` is written, for "no such credentials" errors in the
  std::string snmp_path;  // topology file's terms
};

struct TopologyDevice {
  std::string name;
  std::vector<TopologyInterface> interfaces;
  std::optional<DeviceManagement> management;
};

struct LinkEnd {
  std::string device;
  std::string interface;
  std::string text() const { return device + ":" + interface; }
};

struct TopologyLink {
  LinkEnd a, b;
  std::string cable;                // "" when not given
  std::vector<std::string> optics;  // empty, or one per end: a's, then b's
};

// Where an address lives: a device and, when the file lists it on one, an interface.
struct Place {
  std::string device;
  std::string interface;
};

// A directed link between two consecutive hops of a path, named as well as the topology allows.
struct NamedLink {
  std::string key;   // identifies the link and its direction: "leaf1:swp3 -> spine2:swp1", or by addresses
  std::string name;  // key, then ", cable C-017" when the file knows it
  const TopologyLink* link = nullptr;  // the cable, when exactly one matches
  bool reversed = false;               // the hops go from link->b to link->a
};

class FabricTopology {
 public:
  FabricTopology() = default;
  FabricTopology(std::string file, std::vector<TopologyDevice> devices, std::vector<TopologyLink> links);

  const std::string& file() const { return file_; }
  const std::vector<TopologyDevice>& devices() const { return devices_; }
  const std::vector<TopologyLink>& links() const { return links_; }

  std::optional<Place> find(const std::string& address) const;

  // The link from the hop that answered from `from` to the one that answered from `to`. A hop
  // answers from one of its addresses, not always the port the probe came in on, so the cable is
  // found by the port when `to` is a link's end facing `from`'s device, else by the two devices
  // when exactly one cable joins them; otherwise the link is named by its devices (or addresses).
  NamedLink link_between(const std::string& from, const std::string& to) const;

  // The device across the cable from the port that owns `address` (a host's leaf), else across
  // the first cable of the device that owns it; nullopt when the file places it nowhere.
  std::optional<std::string> attached_to(const std::string& address) const;

 private:
  std::string file_;
  std::vector<TopologyDevice> devices_;
  std::vector<TopologyLink> links_;
  std::map<std::string, Place> places_;                           // address -> its port
  std::map<std::string, std::vector<std::size_t>> links_at_end_;  // "device:interface" -> links
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> links_joining_;  // devices, lesser first
};

// What a node of a path is called: "leaf1" (or "leaf1:swp3"), else the address as text.
std::string node_name(const FabricTopology* topology, const std::string& address);

class TopologyFileInvalid : public std::runtime_error {
 public:
  explicit TopologyFileInvalid(std::vector<YamlError> errors);
  const std::vector<YamlError>& errors() const { return errors_; }

 private:
  std::vector<YamlError> errors_;
};

// Throws TopologyFileInvalid, also when the file cannot be read.
FabricTopology load_topology_file(const std::string& path);
// `file_name` is used only in positions. Throws TopologyFileInvalid.
FabricTopology load_topology_text(std::string_view yaml_text, const std::string& file_name);

}  // namespace tusk
