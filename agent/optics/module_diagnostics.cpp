#include "agent/optics/module_diagnostics.hpp"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "agent/optics/ethtool_output.hpp"
#include "common/optics_reading.hpp"

namespace tusk {
namespace {

using nlohmann::json;

// How ethtool names a quantity in a flag or threshold: "<text> high alarm threshold" in text,
// "<json>_high_alarm" in JSON (sff-common.c, sfpdiag.c, qsfp.c, cmis.c, module-common.c).
struct ModuleQuantityName {
  std::string_view text;
  std::string_view json;
  ModuleQuantity quantity;
};
constexpr ModuleQuantityName kModuleQuantityNames[] = {
    {"Laser bias current", "laser_bias_current", ModuleQuantity::tx_bias},
    {"Laser output power", "laser_output_power", ModuleQuantity::tx_power},
    {"Laser tx power", "laser_tx_power", ModuleQuantity::tx_power},
    {"Laser rx power", "laser_rx_power", ModuleQuantity::rx_power},
    {"Module temperature", "module_temperature", ModuleQuantity::temperature},
    {"Module voltage", "module_voltage", ModuleQuantity::voltage},
};

struct ModuleLimitName {
  std::string_view text;
  std::string_view json;
  ModuleLimit limit;
};
constexpr ModuleLimitName kModuleLimitNames[] = {
    {"high alarm", "high_alarm", ModuleLimit::high_alarm},
    {"low alarm", "low_alarm", ModuleLimit::low_alarm},
    {"high warning", "high_warning", ModuleLimit::high_warning},
    {"low warning", "low_warning", ModuleLimit::low_warning},
};

// What the output showed, beyond the fields themselves, for the status at the end.
struct ModuleEvidence {
  bool module_seen = false;    // an identifier, vendor or other module line
  bool dom_declined = false;   // "Optical diagnostics support : No"
  bool monitors_seen = false;  // lanes, flags (raised or not), thresholds, "Alarm/warning flags implemented"
  bool hex_dump = false;       // ethtool dumped an EEPROM it does not decode
};

ModuleSpec spec_of_identifier(std::uint32_t identifier) {
  switch (identifier) {
    case 0x02:  // soldered module, SFF-8472 map
    case 0x03:
      return ModuleSpec::sff8472;
    case 0x0C:
    case 0x0D:
    case 0x11:
      return ModuleSpec::sff8636;
    case 0x18:
    case 0x19:
    case 0x1B:
    case 0x1E:
    case 0x1F:
    case 0x20:
      return ModuleSpec::cmis;
    default:
      return ModuleSpec::unknown;
  }
}

// The lane numbered `lane_number` (from 1), grown into place; nullptr past the bound.
OpticalLane* module_lane(ModuleReading& reading, std::uint32_t lane_number) {
  if (lane_number == 0) return nullptr;
  if (lane_number > kMaxOpticsLanes) {
    reading.lanes_dropped = true;
    return nullptr;
  }
  if (reading.lanes.size() < lane_number) reading.lanes.resize(lane_number);
  return &reading.lanes[lane_number - 1];
}

std::optional<double>& module_threshold_value(ModuleThresholdSet& set, ModuleLimit limit) {
  switch (limit) {
    case ModuleLimit::high_alarm:
      return set.high_alarm;
    case ModuleLimit::low_alarm:
      return set.low_alarm;
    case ModuleLimit::high_warning:
      return set.high_warning;
    case ModuleLimit::low_warning:
      break;
  }
  return set.low_warning;
}

RxPowerKind rx_power_kind_of(std::string_view name) {
  if (name.find("OMA") != std::string_view::npos) return RxPowerKind::oma;
  if (name.find("av") != std::string_view::npos) return RxPowerKind::average;  // "average", "avg"
  return RxPowerKind::unknown;
}

void raise_flag(ModuleReading& reading, ModuleQuantity quantity, ModuleLimit limit, std::optional<std::uint32_t> lane) {
  if (lane && *lane > kMaxOpticsLanes) {
    reading.lanes_dropped = true;
    return;
  }
  // One of each is enough: a hostile source repeating a line a million times stores it once.
  for (const ModuleFlag& flag : reading.flags_raised) {
    if (flag.quantity == quantity && flag.limit == limit && flag.lane == lane) return;
  }
  reading.flags_raised.push_back(ModuleFlag{quantity, limit, lane});
}

// ---- Text -------------------------------------------------------------------------------------

struct ModuleTextLine {
  std::string name;                   // blanks collapsed, the lane suffix taken off
  std::optional<std::uint32_t> lane;  // from "(Channel N)" or "(Chan N)"
  std::string_view value;
};

std::string collapsed_blanks(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const bool blank = c == ' ' || c == '\t';
    if (blank && (out.empty() || out.back() == ' ')) continue;
    out.push_back(blank ? ' ' : c);
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// "(Channel 3)" or "(Chan 3)" at the end of `name`: the lane, and `name` without it.
std::optional<std::uint32_t> take_lane_suffix(std::string& name) {
  if (name.empty() || name.back() != ')') return std::nullopt;
  const std::size_t open = name.rfind('(');
  if (open == std::string::npos) return std::nullopt;
  std::string_view inside = std::string_view(name).substr(open + 1, name.size() - open - 2);
  if (inside.substr(0, 7) == "Channel") {
    inside.remove_prefix(7);
  } else if (inside.substr(0, 4) == "Chan") {
    inside.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const std::optional<std::uint64_t> number = whole_count(inside);
  if (!number || *number > 0xFFFFFFFFu) return std::nullopt;
  name = collapsed_blanks(std::string_view(name).substr(0, open));
  return static_cast<std::uint32_t>(*number);
}

std::optional<ModuleTextLine> split_module_line(std::string_view line) {
  const std::size_t separator = line.find(" : ");
  if (separator == std::string_view::npos) return std::nullopt;
  ModuleTextLine parsed;
  parsed.name = collapsed_blanks(line.substr(0, separator));
  parsed.lane = take_lane_suffix(parsed.name);
  parsed.value = line.substr(separator + 3);
  return parsed;
}

// "0x11 (QSFP28)": the byte and ethtool's name for it (which may itself end in parentheses:
// "QSFP-DD Double Density 8X Pluggable Transceiver (INF-8628)").
void read_text_identifier(ModuleReading& reading, std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  if (value.size() > 2 && value[0] == '0' && (value[1] == 'x' || value[1] == 'X')) {
    std::uint32_t byte = 0;
    const char* begin = value.data() + 2;
    const auto [end, error] = std::from_chars(begin, value.data() + value.size(), byte, 16);
    if (error == std::errc() && end != begin && byte <= 0xFF) reading.identifier = byte;
  }
  const std::size_t open = value.find('(');
  const std::size_t close = value.rfind(')');
  if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
    reading.identifier_text = bounded_text(value.substr(open + 1, close - open - 1));
  }
}

// "0.5871 mW / -2.31 dBm" (dBm as ethtool printed it; "-inf" for no light reads as absent).
void read_text_power(std::string_view value, std::optional<double>& mw, std::optional<double>& dbm) {
  mw = leading_number(value);
  const std::size_t slash = value.find('/');
  dbm = slash == std::string_view::npos ? dbm_of_mw(mw) : leading_number(value.substr(slash + 1));
}

bool read_text_identity(ModuleReading& reading, ModuleEvidence& evidence, const ModuleTextLine& line) {
  if (line.name == "Identifier") {
    read_text_identifier(reading, line.value);
  } else if (line.name == "Vendor name") {
    reading.vendor_name = bounded_text(line.value);
  } else if (line.name == "Vendor PN") {
    reading.part_number = bounded_text(line.value);
  } else if (line.name == "Vendor SN") {
    reading.serial_number = bounded_text(line.value);
  } else if (line.name == "Optical diagnostics support") {
    if (starts_with_nocase(line.value, "No")) evidence.dom_declined = true;
  } else if (line.name == "Alarm/warning flags implemented") {
    reading.flags_implemented = starts_with_nocase(line.value, "Yes");
    evidence.monitors_seen = true;
  } else if (line.name == "Module temperature" && !line.lane) {
    reading.temperature_c = leading_number(line.value);
  } else if (line.name == "Module voltage" && !line.lane) {
    reading.supply_voltage_v = leading_number(line.value);
  } else {
    return false;
  }
  evidence.module_seen = true;
  return true;
}

// A lane's monitor. SFF-8472 prints its one lane without a channel: lane 1.
bool read_text_lane_monitor(ModuleReading& reading, ModuleEvidence& evidence, const ModuleTextLine& line) {
  const std::string& name = line.name;
  const bool bias = name == "Laser tx bias current" || (name == "Laser bias current" && !line.lane);
  const bool tx = name == "Transmit avg optical power" || (name == "Laser output power" && !line.lane);
  const bool rx = name == "Rcvr signal avg optical power" || name == "Receiver signal average optical power" ||
                  name == "Receiver signal OMA";
  if (!bias && !tx && !rx) return false;
  evidence.module_seen = evidence.monitors_seen = true;
  OpticalLane* lane = module_lane(reading, line.lane.value_or(1));
  if (lane == nullptr) return true;
  if (bias) {
    lane->tx_bias_ma = leading_number(line.value);
  } else if (tx) {
    read_text_power(line.value, lane->tx_power_mw, lane->tx_power_dbm);
  } else {
    reading.rx_power_kind = rx_power_kind_of(name);
    read_text_power(line.value, lane->rx_power_mw, lane->rx_power_dbm);
  }
  return true;
}

// "<quantity> <high|low> <alarm|warning>[ threshold]": a flag (On/Off) or a threshold.
bool read_text_limit(ModuleReading& reading, ModuleEvidence& evidence, const ModuleTextLine& line) {
  std::string_view name = line.name;
  constexpr std::string_view kThresholdSuffix = " threshold";
  const bool threshold =
      name.size() > kThresholdSuffix.size() && name.substr(name.size() - kThresholdSuffix.size()) == kThresholdSuffix;
  if (threshold) name.remove_suffix(kThresholdSuffix.size());
  for (const ModuleQuantityName& quantity : kModuleQuantityNames) {
    if (name.size() <= quantity.text.size() + 1 || name.substr(0, quantity.text.size()) != quantity.text ||
        name[quantity.text.size()] != ' ') {
      continue;
    }
    const std::string_view limit_text = name.substr(quantity.text.size() + 1);
    for (const ModuleLimitName& limit : kModuleLimitNames) {
      if (limit_text != limit.text) continue;
      evidence.module_seen = evidence.monitors_seen = true;
      if (threshold) {
        module_threshold_value(thresholds_of(reading.thresholds, quantity.quantity), limit.limit) =
            leading_number(line.value);
      } else if (starts_with_nocase(line.value, "On")) {
        raise_flag(reading, quantity.quantity, limit.limit, line.lane);
      }
      return true;
    }
  }
  return false;
}

void read_module_text(std::string_view output, ModuleReading& reading, ModuleEvidence& evidence) {
  for (const std::string_view raw : ethtool_lines(output)) {
    if (raw.substr(0, 6) == "Offset" && raw.find("Values") != std::string_view::npos) evidence.hex_dump = true;
    const std::optional<ModuleTextLine> line = split_module_line(raw);
    if (!line) continue;
    if (read_text_identity(reading, evidence, *line)) continue;
    if (read_text_lane_monitor(reading, evidence, *line)) continue;
    if (read_text_limit(reading, evidence, *line)) continue;
    evidence.module_seen = true;  // one of the many fields not kept (connector, lengths, ...)
  }
}

// ---- JSON -------------------------------------------------------------------------------------

std::string json_text_field(const json& device, const char* key) {
  const auto it = device.find(key);
  return it != device.end() && it->is_string() ? bounded_text(it->get_ref<const std::string&>()) : std::string();
}

// The first of a key's repeats that is a number: the reading, where a repeat holds the thresholds.
std::optional<double> json_first_number(const json& device, const std::string& key) {
  for (const json* value : json_repeats(device, key)) {
    if (value->is_number()) return json_number(*value);
  }
  return std::nullopt;
}

// A lane array's values across the key's repeats (a second CMIS bank repeats the first's names).
std::vector<const json*> json_lane_values(const json& device, const std::string& key) {
  std::vector<const json*> values;
  for (const json* repeat : json_repeats(device, key)) {
    if (!repeat->is_array()) continue;
    for (const json& value : *repeat) {
      if (values.size() > kMaxOpticsLanes) return values;
      values.push_back(&value);
    }
  }
  return values;
}

void read_json_lane_array(ModuleReading& reading, ModuleEvidence& evidence, const std::vector<const json*>& values,
                          std::optional<double> OpticalLane::*field) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    evidence.monitors_seen = true;
    OpticalLane* lane = module_lane(reading, static_cast<std::uint32_t>(i + 1));
    if (lane != nullptr) lane->*field = json_number(*values[i]);
  }
}

void read_json_identity(ModuleReading& reading, ModuleEvidence& evidence, const json& device) {
  if (const auto it = device.find("identifier"); it != device.end()) {
    const std::optional<std::uint64_t> byte = json_count(*it);
    if (byte && *byte <= 0xFF) reading.identifier = static_cast<std::uint32_t>(*byte);
    evidence.module_seen = true;
  }
  reading.identifier_text = json_text_field(device, "identifier_description");
  reading.vendor_name = json_text_field(device, "vendor_name");
  reading.part_number = json_text_field(device, "vendor_pn");
  reading.serial_number = json_text_field(device, "vendor_sn");
  if (!reading.vendor_name.empty() || !reading.part_number.empty()) evidence.module_seen = true;
  if (const auto it = device.find("optical_diagnostics_support"); it != device.end() && it->is_boolean()) {
    evidence.dom_declined = !it->get<bool>();
  }
  if (const auto it = device.find("alarm/warning_flags_implemented"); it != device.end() && it->is_boolean()) {
    reading.flags_implemented = it->get<bool>();
    evidence.monitors_seen = true;
  }
  reading.temperature_c = json_first_number(device, "module_temperature");
  reading.supply_voltage_v = json_first_number(device, "module_voltage");
}

void read_json_monitors(ModuleReading& reading, ModuleEvidence& evidence, const json& device) {
  // SFF-8472: one lane, its values as plain numbers.
  if (const std::optional<double> bias = json_first_number(device, "laser_bias_current")) {
    module_lane(reading, 1)->tx_bias_ma = bias;
    evidence.monitors_seen = true;
  }
  if (const std::optional<double> tx = json_first_number(device, "laser_output_power")) {
    module_lane(reading, 1)->tx_power_mw = tx;
    evidence.monitors_seen = true;
  }
  // SFF-8636 and CMIS: arrays per lane; rx_power is {"values": [...], "type": ...} (or {"value": x}).
  read_json_lane_array(reading, evidence, json_lane_values(device, "laser_tx_bias_current"), &OpticalLane::tx_bias_ma);
  read_json_lane_array(reading, evidence, json_lane_values(device, "transmit_avg_optical_power"),
                       &OpticalLane::tx_power_mw);
  std::vector<const json*> rx_values;
  for (const json* rx : json_repeats(device, "rx_power")) {
    if (!rx->is_object()) continue;
    if (const auto type = rx->find("type"); type != rx->end() && type->is_string()) {
      reading.rx_power_kind = rx_power_kind_of(type->get_ref<const std::string&>());
    }
    if (const auto value = rx->find("value"); value != rx->end() && rx_values.empty()) rx_values.push_back(&*value);
    for (const json* value : json_lane_values(*rx, "values")) {
      if (rx_values.size() <= kMaxOpticsLanes) rx_values.push_back(value);
    }
  }
  read_json_lane_array(reading, evidence, rx_values, &OpticalLane::rx_power_mw);
  for (OpticalLane& lane : reading.lanes) {
    lane.tx_power_dbm = dbm_of_mw(lane.tx_power_mw);
    lane.rx_power_dbm = dbm_of_mw(lane.rx_power_mw);
  }
}

void read_json_flags(ModuleReading& reading, ModuleEvidence& evidence, const json& device) {
  for (const ModuleQuantityName& quantity : kModuleQuantityNames) {
    for (const ModuleLimitName& limit : kModuleLimitNames) {
      const std::string key = std::string(quantity.json) + "_" + std::string(limit.json);
      std::uint32_t lane_number = 0;
      for (const json* value : json_repeats(device, key)) {
        evidence.monitors_seen = true;
        if (value->is_boolean() && value->get<bool>()) raise_flag(reading, quantity.quantity, limit.limit, {});
        if (!value->is_array()) continue;
        for (const json& lane_flag : *value) {
          ++lane_number;
          if (lane_flag.is_boolean() && lane_flag.get<bool>()) {
            raise_flag(reading, quantity.quantity, limit.limit, lane_number);
          }
          if (lane_number > kMaxOpticsLanes) break;
        }
      }
    }
  }
}

// Thresholds as an object under the reading's own name (repeated), or under "<name>_threshold(s)";
// inside, "high_alarm_threshold" or "high_alarm".
void read_json_thresholds(ModuleReading& reading, ModuleEvidence& evidence, const json& device) {
  for (const ModuleQuantityName& quantity : kModuleQuantityNames) {
    const std::string base(quantity.json);
    std::vector<const json*> objects;
    for (const std::string& key : {base, base + "_threshold", base + "_thresholds"}) {
      for (const json* value : json_repeats(device, key)) {
        if (value->is_object()) objects.push_back(value);
      }
    }
    for (const json* object : objects) {
      for (const ModuleLimitName& limit : kModuleLimitNames) {
        const std::string name(limit.json);
        for (const std::string& key : {name + "_threshold", name}) {
          const auto it = object->find(key);
          if (it == object->end()) continue;
          module_threshold_value(thresholds_of(reading.thresholds, quantity.quantity), limit.limit) = json_number(*it);
          evidence.monitors_seen = true;
        }
      }
    }
  }
}

void read_module_json(std::string_view output, ModuleReading& reading, ModuleEvidence& evidence) {
  const std::optional<json> device = parse_ethtool_device(output, reading.note);
  if (!device) return;
  read_json_identity(reading, evidence, *device);
  read_json_monitors(reading, evidence, *device);
  read_json_flags(reading, evidence, *device);
  read_json_thresholds(reading, evidence, *device);
}

// ---- The reading as a whole -------------------------------------------------------------------

void settle_module_flags(ModuleReading& reading) {
  if (reading.spec == ModuleSpec::cmis) {
    std::vector<ModuleFlag> kept;
    for (const ModuleFlag& flag : reading.flags_raised) {
      if (flag.lane) {
        reading.lane_flags_ignored = true;
      } else {
        kept.push_back(flag);
      }
    }
    reading.flags_raised = std::move(kept);
  }
  // An SFP's laser flags are its one lane's.
  if (reading.spec == ModuleSpec::sff8472) {
    for (ModuleFlag& flag : reading.flags_raised) {
      const bool lane_quantity = flag.quantity == ModuleQuantity::tx_bias ||
                                 flag.quantity == ModuleQuantity::tx_power || flag.quantity == ModuleQuantity::rx_power;
      if (lane_quantity && !flag.lane) flag.lane = 1;
    }
  }
}

void settle_module_status(ModuleReading& reading, const ModuleEvidence& evidence, std::string_view output) {
  if (evidence.dom_declined) {
    ModuleReading identity_only;
    identity_only.status = ModuleStatus::no_diagnostics;
    identity_only.note = "Optical diagnostics support: No";
    identity_only.spec = reading.spec;
    identity_only.identifier = reading.identifier;
    identity_only.identifier_text = std::move(reading.identifier_text);
    identity_only.vendor_name = std::move(reading.vendor_name);
    identity_only.part_number = std::move(reading.part_number);
    identity_only.serial_number = std::move(reading.serial_number);
    reading = std::move(identity_only);
    return;
  }
  if (evidence.monitors_seen) {
    reading.status = ModuleStatus::diagnostics;
    return;
  }
  // No monitors: SFF-8636 prints a passive cable's temperature and voltage as zero.
  reading.temperature_c.reset();
  reading.supply_voltage_v.reset();
  // A failure after the identity (a page that would not read) is no proof that there are none.
  const std::optional<std::string> error = ethtool_error_line(output);
  if (error && !is_not_supported(*error)) {
    reading.note = *error;
  } else if (evidence.module_seen) {
    reading.status = ModuleStatus::no_diagnostics;
    reading.note = "the module reports no monitors (a passive cable?)";
  } else if (error) {
    reading.status = ModuleStatus::no_diagnostics;
    reading.note = *error;
  } else if (evidence.hex_dump) {
    reading.note = "ethtool dumped the EEPROM in hex: a module it does not decode";
  } else if (reading.note.empty()) {
    reading.note = "no module information in ethtool's output";
  }
}

}  // namespace

ModuleReading parse_module_diagnostics(std::string_view output) {
  ModuleReading reading;
  ModuleEvidence evidence;
  if (looks_like_json(output)) {
    read_module_json(output, reading, evidence);
  } else {
    read_module_text(output, reading, evidence);
  }
  if (reading.identifier) reading.spec = spec_of_identifier(*reading.identifier);
  settle_module_flags(reading);
  settle_module_status(reading, evidence, output);
  return reading;
}

}  // namespace tusk
