#include "agent/lldp/lldpcli_json.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <tuple>

#include "common/json_text.hpp"
#include "common/ordered_json.hpp"
#include "common/printable.hpp"

namespace tusk::lldp {

namespace {

// Ordered: lldpcli's order of interfaces stays the order they are returned in. OrderedJson, not
// ordered_json, which reads an object of n keys in n² time.
using LldpJson = OrderedJson;

// lldpcli's json writer copies a neighbour's bytes into its strings as they came: a control
// character there, or ill-formed UTF-8, makes the document invalid JSON that every strict parser
// refuses, and one switch would hide every neighbour. Ill-formed bytes become U+FFFD (as json0's
// writer has them) and control characters inside strings become \u00XX escapes.
std::string lldpcli_json_repaired(std::string_view text) {
  const std::string valid = valid_utf8(text);
  std::string out;
  out.reserve(valid.size());
  bool in_string = false, escaped = false;
  for (const char c : valid) {
    const auto byte = static_cast<unsigned char>(c);
    if (in_string && !escaped && byte < 0x20) {
      out += fmt::format("\\u{:04x}", byte);
      continue;
    }
    out += c;
    if (escaped) {
      escaped = false;
    } else if (in_string && c == '\\') {
      escaped = true;
    } else if (c == '"') {
      in_string = !in_string;
    }
  }
  return out;
}

// "an object", "a number": what a value is, for a message.
std::string_view json_kind_of(const LldpJson& value) {
  switch (value.type()) {
    case LldpJson::value_t::object:
      return "an object";
    case LldpJson::value_t::array:
      return "an array";
    case LldpJson::value_t::string:
      return "a string";
    case LldpJson::value_t::boolean:
      return "a boolean";
    case LldpJson::value_t::null:
      return "null";
    default:
      return "a number";
  }
}

[[noreturn]] void lldpcli_fail(const std::string& path, std::string_view what) {
  throw LldpcliOutputError(fmt::format("lldpcli output: {}: {}", path, what));
}

// json0 wraps every value in an array; json does where a value repeats (mgmt-ip). The first one.
const LldpJson& first_of(const LldpJson& value) {
  static const LldpJson none;
  if (!value.is_array()) return value;
  return value.empty() ? none : value.front();
}

// A leaf's text: "x" (json), [{"value": "x"}] (json0), {"value": "x"}; "" when absent.
std::string lldpcli_text(const LldpJson& node, const std::string& path) {
  const LldpJson& value = first_of(node).is_object() ? member_or_null(first_of(node), "value") : first_of(node);
  if (value.is_null()) return {};
  if (!value.is_string()) lldpcli_fail(path, fmt::format("{}, not a string", json_kind_of(value)));
  return lldp_text(value.get_ref<const std::string&>());
}

// The first IPv4 address of a "mgmt-ip" (a string, or an array of them or of {"value": ...}),
// else its first address.
std::string lldpcli_management_address(const LldpJson& node, const std::string& path) {
  std::string first;
  const std::size_t count = node.is_array() ? node.size() : 1;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string address = lldpcli_text(node.is_array() ? node[i] : node, fmt::format("{}[{}]", path, i));
    if (address.find('.') != std::string::npos && address.find(':') == std::string::npos) return address;
    if (first.empty()) first = address;
  }
  return first;
}

std::uint8_t chassis_subtype_of(std::string_view type) {
  if (type == "ifalias") return 2;
  if (type == "mac") return 4;
  if (type == "ip") return 5;
  if (type == "ifname") return 6;
  if (type == "local") return 7;
  return 0;  // "unhandled": chassis component (1) or port component (3), lldpcli does not say
}

std::uint8_t port_subtype_of(std::string_view type) {
  if (type == "ifalias") return 1;
  if (type == "mac") return 3;
  if (type == "ip") return 4;
  if (type == "ifname") return 5;
  if (type == "local") return 7;
  return 0;  // "unhandled": port component (2) or agent circuit id (6)
}

// An "id": {"type", "value"} (json) or [{"type", "value"}] (json0) as its value and type.
std::pair<std::string, std::string> lldpcli_id(const LldpJson& node, const std::string& path) {
  const LldpJson& id = first_of(node);
  if (id.is_null()) return {};
  if (!id.is_object()) lldpcli_fail(path, fmt::format("{}, not an object", json_kind_of(id)));
  return {lldpcli_text(member_or_null(id, "value"), path + ".value"),
          lldpcli_text(member_or_null(id, "type"), path + ".type")};
}

std::uint32_t lldpcli_ttl(const std::string& text, const std::string& path) {
  std::uint64_t seconds = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') lldpcli_fail(path, fmt::format("\"{}\" is not a number of seconds", text));
    seconds = seconds * 10 + static_cast<unsigned>(c - '0');
    if (seconds > std::numeric_limits<std::uint32_t>::max()) lldpcli_fail(path, "more seconds than a TTL holds");
  }
  return static_cast<std::uint32_t>(seconds);
}

// lldpcli's "age", "0 day, 00:00:05": the seconds since lldpd first heard the neighbour; 0 when
// it is not in that shape (an age only ranks a port's neighbours, it judges nothing).
std::uint32_t lldpcli_age(const LldpJson& node) {
  const LldpJson& age = first_of(node);
  const std::string* text = age.is_string() ? age.get_ptr<const std::string*>() : nullptr;
  if (!text || text->size() > 32) return 0;
  unsigned days = 0, hours = 0, minutes = 0, seconds = 0;
  if (std::sscanf(text->c_str(), "%u day%*[s], %u:%u:%u", &days, &hours, &minutes, &seconds) != 4 &&
      std::sscanf(text->c_str(), "%u day, %u:%u:%u", &days, &hours, &minutes, &seconds) != 4) {
    return 0;
  }
  const std::uint64_t total = std::uint64_t{days} * 86400 + std::uint64_t{hours} * 3600 + minutes * 60ull + seconds;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(total, std::numeric_limits<std::uint32_t>::max()));
}

// Whether a json-format "chassis" object is keyed by the system name ({"spine1": {"id": ...}})
// rather than holding "id" itself (a neighbour that sent no name). A system named "id" is told
// apart by what its one member holds: an "id" of its own rather than "type" and "value".
bool keyed_by_system_name(const LldpJson& chassis) {
  if (chassis.size() != 1 || !chassis.begin().value().is_object()) return false;
  return chassis.begin().key() != "id" || chassis.begin().value().contains("id");
}

class LldpcliReader {
 public:
  explicit LldpcliReader(bool json0) : json0_(json0) {}

  // One interface entry: its chassis and port, in either format.
  void add(const std::string& path, const std::string& interface, const LldpJson& body) {
    if (neighbours_.size() == kMaxLldpcliNeighbours) {
      lldpcli_fail(path, fmt::format("more than {} neighbours", kMaxLldpcliNeighbours));
    }
    if (!body.is_object()) lldpcli_fail(path, fmt::format("{}, not an object", json_kind_of(body)));
    LldpNeighbour neighbour;
    std::string chassis_path = path + ".chassis";
    const LldpJson* chassis = &first_of(member_or_null(body, "chassis"));
    if (!chassis->is_object()) lldpcli_fail(chassis_path, "missing, or not an object");
    if (json0_) {
      neighbour.system_name = lldpcli_text(member_or_null(*chassis, "name"), chassis_path + ".name");
    } else if (keyed_by_system_name(*chassis)) {
      neighbour.system_name = lldp_text(chassis->begin().key());
      chassis_path += "." + neighbour.system_name;
      chassis = &chassis->begin().value();
    }
    std::string type;
    std::tie(neighbour.chassis_id, type) = lldpcli_id(member_or_null(*chassis, "id"), chassis_path + ".id");
    neighbour.chassis_id_subtype = chassis_subtype_of(type);
    neighbour.management_address =
        lldpcli_management_address(member_or_null(*chassis, "mgmt-ip"), chassis_path + ".mgmt-ip");

    const std::string port_path = path + ".port";
    const LldpJson& port = first_of(member_or_null(body, "port"));
    if (!port.is_object()) lldpcli_fail(port_path, "missing, or not an object");
    std::tie(neighbour.port_id, type) = lldpcli_id(member_or_null(port, "id"), port_path + ".id");
    neighbour.port_id_subtype = port_subtype_of(type);
    neighbour.port_description = lldpcli_text(member_or_null(port, "descr"), port_path + ".descr");
    // lldpd before 0.9.9 wrote the TTL under the chassis.
    const bool ttl_in_port = !member_or_null(port, "ttl").is_null();
    neighbour.ttl_s =
        lldpcli_ttl(lldpcli_text(member_or_null(ttl_in_port ? port : *chassis, "ttl"), port_path + ".ttl"),
                    (ttl_in_port ? port_path : chassis_path) + ".ttl");
    neighbour.age_s = lldpcli_age(member_or_null(body, "age"));
    neighbours_.emplace_back(lldp_text(interface), std::move(neighbour));
  }

  // json: {"eth0": {...}} and [{"eth0": {...}}, ...]; several members of one object each count.
  void add_keyed(const std::string& path, const LldpJson& entries) {
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      add(path + "." + lldp_text(it.key()), it.key(), it.value());
    }
  }

  void read_json(const LldpJson& lldp) {
    if (!lldp.is_object()) lldpcli_fail("lldp", fmt::format("{}, not an object", json_kind_of(lldp)));
    const LldpJson& interfaces = member_or_null(lldp, "interface");
    if (interfaces.is_object()) {
      add_keyed("lldp.interface", interfaces);
    } else if (interfaces.is_array()) {
      for (std::size_t i = 0; i < interfaces.size(); ++i) {
        const std::string path = fmt::format("lldp.interface[{}]", i);
        if (!interfaces[i].is_object())
          lldpcli_fail(path, fmt::format("{}, not an object", json_kind_of(interfaces[i])));
        add_keyed(path, interfaces[i]);
      }
    } else if (!interfaces.is_null()) {
      lldpcli_fail("lldp.interface", fmt::format("{}, neither an object nor an array", json_kind_of(interfaces)));
    }
  }

  // json0: [{"interface": [{"name": "eth0", ...}, ...]}].
  void read_json0(const LldpJson& lldp) {
    for (std::size_t i = 0; i < lldp.size(); ++i) {
      if (!lldp[i].is_object())
        lldpcli_fail(fmt::format("lldp[{}]", i), fmt::format("{}, not an object", json_kind_of(lldp[i])));
      const LldpJson& interfaces = member_or_null(lldp[i], "interface");
      if (interfaces.is_null()) continue;
      if (!interfaces.is_array()) {
        lldpcli_fail(fmt::format("lldp[{}].interface", i), fmt::format("{}, not an array", json_kind_of(interfaces)));
      }
      for (std::size_t j = 0; j < interfaces.size(); ++j) {
        const std::string path = fmt::format("lldp[{}].interface[{}]", i, j);
        const std::string name = lldpcli_text(member_or_null(interfaces[j], "name"), path + ".name");
        add(path, name, interfaces[j]);
      }
    }
  }

  std::vector<InterfaceNeighbour> take() { return std::move(neighbours_); }

 private:
  bool json0_;
  std::vector<InterfaceNeighbour> neighbours_;
};

}  // namespace

std::vector<InterfaceNeighbour> parse_lldpcli_neighbours(std::string_view text) {
  if (text.size() > kMaxLldpcliOutputBytes) {
    throw LldpcliOutputError(fmt::format("lldpcli output: {} bytes, more than the {} it is read up to", text.size(),
                                         kMaxLldpcliOutputBytes));
  }
  LldpJson document;
  try {
    document = parse_json<LldpJson>(lldpcli_json_repaired(text));
  } catch (const JsonTooDeep& e) {
    throw LldpcliOutputError(fmt::format("lldpcli output: {}", e.what()));
  } catch (const LldpJson::exception& e) {
    throw LldpcliOutputError(fmt::format("lldpcli output is not JSON: {}", printable(e.what())));
  }
  const LldpJson& lldp = member_or_null(document, "lldp");
  if (lldp.is_null()) lldpcli_fail("lldp", "missing: not what lldpcli show neighbors writes");
  LldpcliReader reader(lldp.is_array());
  if (lldp.is_array()) {
    reader.read_json0(lldp);
  } else {
    reader.read_json(lldp);
  }
  return reader.take();
}

}  // namespace tusk::lldp
