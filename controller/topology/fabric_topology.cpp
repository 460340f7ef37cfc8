#include "controller/topology/fabric_topology.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace tusk {
std::optional<std::string> canonical_ipv4(const std::string& text) {
  in_addr parsed{};
  if (inet_pton(AF_INET, text.c_str(), &parsed) != 1) return std::nullopt;
  char out[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &parsed, out, sizeof out);
  return std::string(out);
}

namespace {

using Value = YamlValue;

class TopologyReader {
 public:
  explicit TopologyReader(YamlErrors& errors) : read_(errors) {}

  FabricTopology read(const YAML::Node& node) {
    const Value root = read_.root(node);
    if (node.IsNull()) {
      read_.fail(root, "the topology file is empty: expected devices and links");
      return {};
    }
    const auto entries = read_.mapping(root, "a mapping with devices and links");
    if (!entries) return {};
    const Value* devices = nullptr;
    const Value* links = nullptr;
    for (const auto& entry : *entries) {
      if (entry.key == "devices") {
        devices = &entry.value;
      } else if (entry.key == "links") {
        links = &entry.value;
      } else {
        read_.unknown_key(entry, {"devices", "links"});
      }
    }
    if (!devices) read_.missing(root, "devices");
    if (devices) read_devices(*devices);
    if (links) read_links(*links);
    return FabricTopology(read_.errors().file(), std::move(devices_), std::move(links_));
  }

 private:
  void read_devices(const Value& value) {
    const auto entries = read_.mapping(value, "a mapping of device names to their interfaces");
    if (!entries) return;
    for (const auto& entry : *entries) {
      if (entry.key.find(':') != std::string::npos) {
        read_.fail(entry.value, fmt::format("device name '{}' has a ':', which separates device from port", entry.key));
        continue;
      }
      TopologyDevice device;
      device.name = entry.key;
      if (!entry.value.node.IsNull()) {
        const auto keys = read_.mapping(entry.value, "a mapping with interfaces");
        for (const auto& key : keys.value_or(std::vector<YamlEntry>{})) {
          if (key.key == "interfaces") {
            read_interfaces(key.value, device);
          } else if (key.key == "management") {
            device.management = read_management(key.value);
          } else {
            read_.unknown_key(key, {"interfaces", "management"});
          }
        }
      }
      device_index_.emplace(device.name, devices_.size());
      for (const auto& interface : device.interfaces) ports_.insert(device.name + ":" + interface.name);
      devices_.push_back(std::move(device));
    }
  }

  std::optional<DeviceManagement> read_management(const Value& value) {
    const auto entries = read_.mapping(value, "a mapping with address and snmp");
    if (!entries) return std::nullopt;
    DeviceManagement management;
    bool has_address = false, has_snmp = false;
    for (const auto& entry : *entries) {
      if (entry.key == "address") {
        has_address = true;
        const std::string* text = read_.scalar(entry.value, "an IPv4 address");
        if (!text) continue;
        const auto address = canonical_ipv4(*text);
        if (!address) {
          read_.fail(entry.value, fmt::format("'{}' is not an IPv4 address", *text));
          continue;
        }
        management.address = *address;
      } else if (entry.key == "snmp") {
        has_snmp = true;
        const auto name = read_.non_empty_string(entry.value);
        if (!name) continue;
        management.snmp = *name;
        management.snmp_pos = entry.value.pos;
        management.snmp_path = entry.value.path;
      } else {
        read_.unknown_key(entry, {"address", "snmp"});
      }
    }
    if (!has_address) read_.missing(value, "address");
    if (!has_snmp) read_.missing(value, "snmp");
    if (management.address.empty() || management.snmp.empty()) return std::nullopt;
    return management;
  }

  void read_interfaces(const Value& value, TopologyDevice& device) {
    const auto entries = read_.mapping(value, "a mapping of interface names to addresses");
    if (!entries) return;
    for (const auto& entry : *entries) {
      TopologyInterface interface;
      interface.name = entry.key;
      std::vector<Value> values;
      if (entry.value.node.IsSequence()) {
        for (std::size_t i = 0; i < entry.value.node.size(); ++i) {
          values.push_back(read_.element(entry.value, entry.value.node[i], i));
        }
      } else if (!entry.value.node.IsNull()) {
        values.push_back(entry.value);
      }
      for (const Value& item : values) {
        const std::string* text = read_.scalar(item, "an IPv4 address");
        if (!text) continue;
        const auto address = canonical_ipv4(*text);
        if (!address) {
          read_.fail(item, fmt::format("'{}' is not an IPv4 address", *text));
          continue;
        }
        if (const auto owner = owners_.find(*address); owner != owners_.end()) {
          read_.fail(item,
                     fmt::format("{} is already {}'s address: an address names one port", *address, owner->second));
          continue;
        }
        owners_.emplace(*address, device.name + ":" + interface.name);
        interface.addresses.push_back(*address);
      }
      device.interfaces.push_back(std::move(interface));
    }
  }

  std::optional<LinkEnd> end(const Value& at, const std::string& text) {
    const auto colon = text.find(':');
    const auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(" \t"));
      s.erase(s.find_last_not_of(" \t") + 1);
      return s;
    };
    if (colon == std::string::npos) {
      read_.fail(at, fmt::format("link end '{}' is not DEVICE:INTERFACE, e.g. leaf1:swp3", trim(text)));
      return std::nullopt;
    }
    LinkEnd out{trim(text.substr(0, colon)), trim(text.substr(colon + 1))};
    const auto indexed = device_index_.find(out.device);
    if (indexed == device_index_.end()) {
      read_.fail(at, fmt::format("link end {}: no device '{}' under devices", out.text(), out.device));
      return std::nullopt;
    }
    const TopologyDevice* device = &devices_[indexed->second];
    if (!ports_.contains(out.text())) {
      std::vector<std::string> names;
      for (const auto& i : device->interfaces) names.push_back(i.name);
      read_.fail(at,
                 fmt::format("link end {}: {} has no interface '{}' (its interfaces: {})", out.text(), out.device,
                             out.interface, names.empty() ? "none listed" : fmt::format("{}", fmt::join(names, ", "))));
      return std::nullopt;
    }
    if (const auto used = ends_used_.find(out.text()); used != ends_used_.end()) {
      read_.fail(at,
                 fmt::format("{} is already an end of links[{}]: a port takes one cable", out.text(), used->second));
      return std::nullopt;
    }
    return out;
  }

  void read_links(const Value& value) {
    if (!value.node.IsSequence()) {
      read_.mismatch(value, "a list of links (\"leaf1:swp3 <-> spine2:swp1\" or a mapping with ends, cable, optics)");
      return;
    }
    for (std::size_t i = 0; i < value.node.size(); ++i) {
      const Value item = read_.element(value, value.node[i], i);
      TopologyLink link;
      std::optional<Value> ends;
      if (item.node.IsScalar()) {
        ends = item;
      } else {
        const auto entries =
            read_.mapping(item, "\"DEVICE:PORT <-> DEVICE:PORT\" or a mapping with ends, cable, optics");
        if (!entries) continue;
        for (const auto& entry : *entries) {
          if (entry.key == "ends") {
            ends = entry.value;
          } else if (entry.key == "cable") {
            link.cable = read_.non_empty_string(entry.value).value_or("");
          } else if (entry.key == "optics") {
            auto optics = read_.list(entry.value, [&](const Value& v) { return read_.non_empty_string(v); });
            if (optics && optics->size() != 2) {
              read_.fail(entry.value,
                         fmt::format("optics lists {} IDs: give two, one per end in ends' order", optics->size()));
            } else if (optics) {
              link.optics = std::move(*optics);
            }
          } else {
            read_.unknown_key(entry, {"ends", "cable", "optics"});
          }
        }
        if (!ends) {
          read_.missing(item, "ends");
          continue;
        }
      }
      const std::string* text = read_.scalar(*ends, "\"DEVICE:PORT <-> DEVICE:PORT\"");
      if (!text) continue;
      const auto arrow = text->find("<->");
      if (arrow == std::string::npos) {
        read_.fail(*ends, fmt::format("'{}' is not \"DEVICE:PORT <-> DEVICE:PORT\"", *text));
        continue;
      }
      auto a = end(*ends, text->substr(0, arrow));
      auto b = end(*ends, text->substr(arrow + 3));
      if (!a || !b) continue;
      if (a->device == b->device) {
        read_.fail(*ends, fmt::format("'{}' joins {} to itself", *text, a->device));
        continue;
      }
      ends_used_.emplace(a->text(), i);
      ends_used_.emplace(b->text(), i);
      link.a = std::move(*a);
      link.b = std::move(*b);
      links_.push_back(std::move(link));
    }
  }

  YamlReader read_;
  std::vector<TopologyDevice> devices_;
  std::vector<TopologyLink> links_;
  std::map<std::string, std::string> owners_;        // address -> "device:interface"
  std::map<std::string, std::size_t> ends_used_;     // "device:interface" -> links index
  std::map<std::string, std::size_t> device_index_;  // name -> devices_ index (the first of that name)
  std::set<std::string> ports_;                      // "device:interface" of every device's interfaces
};

}  // namespace

FabricTopology::FabricTopology(std::string file, std::vector<TopologyDevice> devices, std::vector<TopologyLink> links)
    : file_(std::move(file)), devices_(std::move(devices)), links_(std::move(links)) {
  // Indexes, so that placing a hop or naming a link costs log n however big the fabric: every
  // localisation round asks for thousands. The first owner of an address or port wins, as a scan
  // in file order would have it.
  for (const auto& device : devices_) {
    for (const auto& interface : device.interfaces) {
      for (const auto& address : interface.addresses) places_.emplace(address, Place{device.name, interface.name});
    }
  }
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const auto& link = links_[i];
    links_at_end_[link.a.text()].push_back(i);
    if (link.b.text() != link.a.text()) links_at_end_[link.b.text()].push_back(i);
    links_joining_[std::minmax(link.a.device, link.b.device)].push_back(i);
  }
}

std::optional<Place> FabricTopology::find(const std::string& address) const {
  const auto canonical = canonical_ipv4(address);
  if (!canonical) return std::nullopt;
  const auto found = places_.find(*canonical);
  if (found == places_.end()) return std::nullopt;
  return found->second;
}

NamedLink FabricTopology::link_between(const std::string& from, const std::string& to) const {
  const auto source = find(from);
  const auto target = find(to);
  NamedLink named;
  if (!source || !target) {
    named.key = fmt::format("{} -> {}", source ? source->device : from, target ? target->device : to);
    named.name = named.key;
    return named;
  }
  const auto pick = [&](const TopologyLink& link) {
    named.link = &link;
    named.reversed = link.b.device == source->device;
    const LinkEnd& out = named.reversed ? link.b : link.a;
    const LinkEnd& in = named.reversed ? link.a : link.b;
    named.key = fmt::format("{} -> {}", out.text(), in.text());
    named.name = link.cable.empty() ? named.key : fmt::format("{}, cable {}", named.key, link.cable);
  };
  // The port the answer came from, when it faces the previous hop.
  if (const auto at_end = links_at_end_.find(LinkEnd{target->device, target->interface}.text());
      at_end != links_at_end_.end()) {
    for (const std::size_t i : at_end->second) {
      const auto& link = links_[i];
      const bool a_is_target = link.a.device == target->device && link.a.interface == target->interface;
      const bool b_is_target = link.b.device == target->device && link.b.interface == target->interface;
      if ((a_is_target && link.b.device == source->device) || (b_is_target && link.a.device == source->device)) {
        pick(link);
        return named;
      }
    }
  }
  std::vector<const TopologyLink*> joining;
  if (const auto between = links_joining_.find(std::minmax(source->device, target->device));
      between != links_joining_.end()) {
    for (const std::size_t i : between->second) joining.push_back(&links_[i]);
  }
  if (joining.size() == 1) {
    pick(*joining.front());
    return named;
  }
  named.key = fmt::format("{} -> {}", source->device, target->device);
  if (joining.empty()) {
    named.name = fmt::format("{} (no cable between them in {})", named.key, file_);
  } else {
    std::vector<std::string> cables;
    for (const auto* link : joining) cables.push_back(link->a.text() + " <-> " + link->b.text());
    named.name = fmt::format("{} (one of {} parallel cables: {})", named.key, joining.size(), fmt::join(cables, "; "));
  }
  return named;
}

std::optional<std::string> FabricTopology::attached_to(const std::string& address) const {
  const auto place = find(address);
  if (!place) return std::nullopt;
  const auto across = [&](const TopologyLink& link) { return link.a.device == place->device ? link.b : link.a; };
  if (const auto at_end = links_at_end_.find(LinkEnd{place->device, place->interface}.text());
      at_end != links_at_end_.end()) {
    return across(links_[at_end->second.front()]).device;
  }
  for (const auto& link : links_) {
    if (link.a.device == place->device || link.b.device == place->device) return across(link).device;
  }
  return std::nullopt;
}

std::string node_name(const FabricTopology* topology, const std::string& address) {
  if (topology) {
    if (const auto place = topology->find(address)) return place->device;
  }
  return address;
}

TopologyFileInvalid::TopologyFileInvalid(std::vector<YamlError> errors)
    : std::runtime_error(join_errors(errors)), errors_(std::move(errors)) {}

FabricTopology load_topology_text(std::string_view yaml_text, const std::string& file_name) {
  YamlErrors errors(file_name);
  const std::optional<YAML::Node> root = parse_yaml(yaml_text, errors);
  if (!root) throw TopologyFileInvalid(errors.take_sorted());
  TopologyReader reader(errors);
  FabricTopology topology = reader.read(*root);
  if (!errors.empty()) throw TopologyFileInvalid(errors.take_sorted());
  return topology;
}

FabricTopology load_topology_file(const std::string& path) {
  YamlErrors errors(path);
  const auto text = read_input_file(errors, "the topology file");
  if (!text) throw TopologyFileInvalid(errors.take_sorted());
  return load_topology_text(*text, path);
}

}  // namespace tusk
