#include "controller/profile/localisation_keys.hpp"

#include <fmt/format.h>

#include <exception>
#include <optional>

#include "common/units.hpp"

namespace tusk::localisation_keys {
namespace {

using profile_schema::ReadContext;
using profile_schema::TestDraft;

// A floor: a share of the frames, 0 (every link with an unexplained event is named) to NoiseFloor::kMax.
std::optional<double> read_floor(YamlReader& read, const YamlValue& value) {
  auto floor = read.ratio(value);
  if (floor && (*floor < 0 || *floor > NoiseFloor::kMax)) {
    read.fail(value, fmt::format("{} {} must be 0..{} of the frames that cross a link (e.g. 1e-6 or 0.0001%)",
                                 value.name, value.text(), units::format_percent(NoiseFloor::kMax)));
    floor.reset();
  }
  return floor;
}

bool read_min_rate(YamlReader& read, const YamlValue& value, NoiseFloor& floor) {
  const auto entries = read.mapping(value, "a mapping with loss or damage (shares of the frames, e.g. 1e-6)");
  if (!entries) return false;
  bool read_all = true;
  for (const auto& entry : *entries) {
    if (entry.key == "loss" || entry.key == "damage") {
      const auto rate = read_floor(read, entry.value);
      read_all = read_all && rate.has_value();
      if (rate) (entry.key == "loss" ? floor.loss : floor.damage) = *rate;
    } else {
      read.unknown_key(entry, min_rate_keys());
      read_all = false;
    }
  }
  return read_all;
}

// The delay a link may add and not be named: "10us", 0 to 1 s.
std::optional<double> read_min_delay(YamlReader& read, const YamlValue& value) {
  if (value.text() == "0") return 0.0;  // names every link that adds any delay the flows show
  try {
    const double ns = static_cast<double>(units::parse_duration(value.text()).count());
    if (ns >= 0 && ns <= NoiseFloor::kMaxDelayNs) return ns;
  } catch (const std::exception&) {
  }
  read.fail(value, fmt::format("{} {} must be a delay of 0 to 1s (e.g. 10us)", value.name, value.text()));
  return std::nullopt;
}

}  // namespace

const std::vector<std::string_view>& keys() {
  static const std::vector<std::string_view> names{"min_rate", "min_delay"};
  return names;
}

const std::vector<std::string_view>& min_rate_keys() {
  static const std::vector<std::string_view> names{"loss", "damage"};
  return names;
}

bool read_localisation(ReadContext& context, const YamlValue& value, TestDraft& draft) {
  YamlReader& read = context.read;
  const auto entries = read.mapping(value, "a mapping with min_rate and min_delay");
  if (!entries) return false;
  // Set as a whole: what the test leaves out is the default, not what `defaults` said.
  LocalisationSettings settings;
  bool read_all = true;
  for (const auto& entry : *entries) {
    if (entry.key == "min_rate") {
      read_all = read_min_rate(read, entry.value, settings.min_rate) && read_all;
    } else if (entry.key == "min_delay") {
      const auto delay = read_min_delay(read, entry.value);
      read_all = delay.has_value() && read_all;
      if (delay) settings.min_rate.delay_ns = *delay;
    } else {
      read.unknown_key(entry, keys());
      read_all = false;
    }
  }
  if (read_all) draft.spec.localisation = settings;
  return read_all;
}

}  // namespace tusk::localisation_keys
