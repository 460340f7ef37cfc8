#include "agent/optics/fec_stats.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/optics/ethtool_output.hpp"
#include "common/optics_reading.hpp"

namespace tusk {
namespace {

using nlohmann::json;

std::string_view fec_trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Stores `value` as lane `index` (from 0), grown into place; past the bound it is dropped.
void put_fec_lane(std::vector<std::optional<std::uint64_t>>& lanes, std::uint64_t index,
                  std::optional<std::uint64_t> value, bool& dropped) {
  if (index >= kMaxOpticsLanes) {
    dropped = true;
    return;
  }
  if (lanes.size() <= index) lanes.resize(index + 1);
  lanes[index] = value;
}

// The counter ethtool names `name`, or none for a name it does not print.
FecCounter* fec_counter_named(FecReading& reading, std::string_view name) {
  if (name == "corrected_blocks") return &reading.corrected_blocks;
  if (name == "uncorrectable_blocks") return &reading.uncorrectable_blocks;
  if (name == "corrected_bits") return &reading.corrected_bits;
  return nullptr;
}

bool fec_counter_read(const FecCounter& counter) {
  return counter.total || !counter.lanes.empty();
}

// ---- Text -------------------------------------------------------------------------------------

// " a, b, c" (the inside of "[ per_lane: a, b, c ]") into lanes.
void read_fec_text_lane_list(std::string_view list, std::vector<std::optional<std::uint64_t>>& lanes, bool& dropped) {
  std::uint64_t index = 0;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    put_fec_lane(lanes, index++, whole_count(list.substr(0, comma)), dropped);
    if (comma == std::string_view::npos || dropped) break;
    list.remove_prefix(comma + 1);
  }
}

// "fec_symbols_err_4_to_7" (or "fec_symbol_err_0"): the bin's range.
std::optional<FecHistogramBin> fec_text_bin(std::string_view name) {
  for (const std::string_view prefix : {std::string_view("fec_symbols_err_"), std::string_view("fec_symbol_err_")}) {
    if (name.substr(0, prefix.size()) != prefix) continue;
    name.remove_prefix(prefix.size());
    const std::size_t to = name.find("_to_");
    const std::optional<std::uint64_t> low = whole_count(name.substr(0, to));
    const std::optional<std::uint64_t> high = to == std::string_view::npos ? low : whole_count(name.substr(to + 4));
    if (!low || !high || *low > 0xFFFFFFFFu || *high > 0xFFFFFFFFu) return std::nullopt;
    FecHistogramBin bin;
    bin.low_symbols = static_cast<std::uint32_t>(*low);
    bin.high_symbols = static_cast<std::uint32_t>(*high);
    return bin;
  }
  return std::nullopt;
}

// "name: N" or "name: N [ per_lane: a, b ]" under "Statistics:". Returns the lanes a following
// "    Lane K: N" line adds to, or nullptr.
std::vector<std::optional<std::uint64_t>>* read_fec_text_statistic(FecReading& reading, std::string_view line) {
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return nullptr;
  const std::string_view name = fec_trimmed(line.substr(0, colon));
  std::string_view value = line.substr(colon + 1);
  std::string_view lane_list;
  if (const std::size_t open = value.find('['); open != std::string_view::npos) {
    lane_list = value.substr(open + 1);
    lane_list = lane_list.substr(0, lane_list.find(']'));
    if (const std::size_t label = lane_list.find(':'); label != std::string_view::npos) {
      lane_list.remove_prefix(label + 1);
    }
    value = value.substr(0, open);
  }
  std::optional<std::uint64_t>* total = nullptr;
  std::vector<std::optional<std::uint64_t>>* lanes = nullptr;
  if (FecCounter* counter = fec_counter_named(reading, name)) {
    total = &counter->total;
    lanes = &counter->lanes;
  } else if (std::optional<FecHistogramBin> bin = fec_text_bin(name)) {
    if (reading.histogram.size() >= kMaxFecHistogramBins) {
      reading.lanes_dropped = true;
      return nullptr;
    }
    reading.histogram.push_back(*bin);
    total = &reading.histogram.back().total;
    lanes = &reading.histogram.back().lanes;
  } else {
    return nullptr;
  }
  *total = whole_count(value);
  if (!lane_list.empty()) read_fec_text_lane_list(lane_list, *lanes, reading.lanes_dropped);
  return lanes;
}

std::vector<FecMode> fec_text_modes(std::string_view list) {
  std::vector<FecMode> modes;
  while (!(list = fec_trimmed(list)).empty() && modes.size() < kMaxFecModes) {
    const std::size_t space = list.find(' ');
    modes.push_back(fec_mode_of(list.substr(0, space)));
    if (space == std::string_view::npos) break;
    list.remove_prefix(space);
  }
  return modes;
}

// What the text showed, for the status at the end.
struct FecTextEvidence {
  bool settings_seen = false;
};

void read_fec_text(std::string_view output, FecReading& reading, FecTextEvidence& evidence) {
  reading.histogram.reserve(kMaxFecHistogramBins);  // last_lanes may point into it
  bool in_statistics = false;
  std::vector<std::optional<std::uint64_t>>* last_lanes = nullptr;
  for (const std::string_view raw : ethtool_lines(output)) {
    const std::string_view line = fec_trimmed(raw);
    const std::size_t colon = line.find(':');
    const std::string_view label = line.substr(0, colon);
    const std::string_view rest = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    if (starts_with_nocase(line, "FEC parameters for ")) {
      evidence.settings_seen = true;
    } else if (label == "Supported/Configured FEC encodings" || label == "Configured FEC encodings") {
      reading.configured = fec_text_modes(rest);
      evidence.settings_seen = true;
    } else if (label == "Active FEC encoding") {
      const std::vector<FecMode> active = fec_text_modes(rest);
      if (!active.empty()) reading.active = active.front();
      evidence.settings_seen = true;
    } else if (line == "Statistics:") {
      in_statistics = true;
    } else if (in_statistics && label.substr(0, 5) == "Lane " && last_lanes != nullptr) {
      const std::optional<std::uint64_t> index = whole_count(label.substr(5));
      if (index) put_fec_lane(*last_lanes, *index, whole_count(rest), reading.lanes_dropped);
    } else if (in_statistics) {
      last_lanes = read_fec_text_statistic(reading, line);
    }
  }
}

// ---- JSON -------------------------------------------------------------------------------------

void read_fec_json_lanes(const json& object, std::vector<std::optional<std::uint64_t>>& lanes, bool& dropped) {
  const auto it = object.find("lanes");
  if (it == object.end() || !it->is_array()) return;
  std::uint64_t index = 0;
  for (const json& value : *it) {
    put_fec_lane(lanes, index++, json_count(value), dropped);
    if (dropped) return;
  }
}

void read_fec_json_counter(const json& value, FecCounter& counter, bool& dropped) {
  if (value.is_number()) {
    counter.total = json_count(value);
    return;
  }
  if (!value.is_object()) return;
  if (const auto total = value.find("total"); total != value.end()) counter.total = json_count(*total);
  read_fec_json_lanes(value, counter.lanes, dropped);
}

void read_fec_json_histogram(const json& bins, FecReading& reading) {
  if (!bins.is_array()) return;
  for (const json& entry : bins) {
    if (!entry.is_object()) continue;
    if (reading.histogram.size() >= kMaxFecHistogramBins) {
      reading.lanes_dropped = true;
      return;
    }
    const auto low = entry.find("bin_low");
    const auto high = entry.find("bin_high");
    if (low == entry.end() || high == entry.end()) continue;
    const std::optional<std::uint64_t> low_count = json_count(*low);
    const std::optional<std::uint64_t> high_count = json_count(*high);
    if (!low_count || !high_count || *low_count > 0xFFFFFFFFu || *high_count > 0xFFFFFFFFu) continue;
    FecHistogramBin bin;
    bin.low_symbols = static_cast<std::uint32_t>(*low_count);
    bin.high_symbols = static_cast<std::uint32_t>(*high_count);
    if (const auto total = entry.find("total"); total != entry.end()) bin.total = json_count(*total);
    read_fec_json_lanes(entry, bin.lanes, reading.lanes_dropped);
    reading.histogram.push_back(std::move(bin));
  }
}

std::vector<FecMode> fec_json_modes(const json& device, const char* key) {
  std::vector<FecMode> modes;
  const auto it = device.find(key);
  if (it == device.end() || !it->is_array()) return modes;
  for (const json& name : *it) {
    if (modes.size() >= kMaxFecModes) break;
    if (name.is_string()) modes.push_back(fec_mode_of(fec_trimmed(name.get_ref<const std::string&>())));
  }
  return modes;
}

void read_fec_json(std::string_view output, FecReading& reading, FecTextEvidence& evidence) {
  const std::optional<json> device = parse_ethtool_device(output, reading.note);
  if (!device) return;
  evidence.settings_seen = device->contains("config") || device->contains("active") || device->contains("ifname");
  reading.configured = fec_json_modes(*device, "config");
  const std::vector<FecMode> active = fec_json_modes(*device, "active");
  if (!active.empty()) reading.active = active.front();
  const auto statistics = device->find("statistics");
  if (statistics == device->end() || !statistics->is_object()) return;
  for (const auto& [name, value] : statistics->items()) {
    if (FecCounter* counter = fec_counter_named(reading, name)) {
      read_fec_json_counter(value, *counter, reading.lanes_dropped);
    } else if (name == "hist") {
      read_fec_json_histogram(value, reading);
    }
  }
}

void settle_fec_status(FecReading& reading, const FecTextEvidence& evidence, std::string_view output) {
  if (fec_counter_read(reading.corrected_blocks) || fec_counter_read(reading.uncorrectable_blocks) ||
      fec_counter_read(reading.corrected_bits) || !reading.histogram.empty()) {
    reading.status = FecStatus::statistics;
    return;
  }
  const std::optional<std::string> error = ethtool_error_line(output);
  if (evidence.settings_seen) {
    reading.status = FecStatus::no_statistics;
    reading.note = "no FEC counters (the driver counts none, or ethtool ran without --include-statistics)";
  } else if (error && is_not_supported(*error)) {
    reading.status = FecStatus::no_statistics;
    reading.note = *error;
  } else if (error) {
    reading.note = *error;
  } else if (reading.note.empty()) {
    reading.note = "no FEC information in ethtool's output";
  }
}

}  // namespace

FecMode fec_mode_of(std::string_view name) {
  const auto is = [name](std::string_view mode) {
    return name.size() == mode.size() && starts_with_nocase(name, mode);
  };
  if (is("None")) return FecMode::none;
  if (is("Off")) return FecMode::off;
  if (is("Auto")) return FecMode::auto_select;
  if (is("BaseR")) return FecMode::baser;
  if (is("RS")) return FecMode::rs;
  if (is("LLRS")) return FecMode::llrs;
  return FecMode::other;
}

FecReading parse_fec_stats(std::string_view output) {
  FecReading reading;
  FecTextEvidence evidence;
  if (looks_like_json(output)) {
    read_fec_json(output, reading, evidence);
  } else {
    read_fec_text(output, reading, evidence);
  }
  settle_fec_status(reading, evidence, output);
  return reading;
}

}  // namespace tusk
