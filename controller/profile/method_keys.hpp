// The profile's `method:` key: reading it into a TestSpec's MethodSpec, and the checks that need
// the rest of the test (its rate, engine, topology and the profile's agents).
#pragma once

#include "controller/profile/profile_schema.hpp"

namespace tusk::method_keys {

// The `method:` mapping of a test (or of `defaults`).
bool read_method(profile_schema::ReadContext& context, const YamlValue& value, profile_schema::TestDraft& draft);

// Cross-key checks, after the engine's own: fills in what the method left to the test (trial
// duration, fan-in steps) and refuses what cannot run.
void check_method(profile_schema::TestCheck& check);

// A frame size (without FCS), or a list of them, bounded to what an Ethernet port carries.
std::optional<std::uint32_t> read_frame_size(YamlReader& read, const YamlValue& value);
std::optional<std::vector<std::uint32_t>> read_frame_sizes(YamlReader& read, const YamlValue& value);

// How a range FROM..TO expands: every number (fan_in, shifts), or FROM doubling up to TO and TO
// itself (bursts, as message_sizes: 2..4096 is 12 steps, not 4,095).
enum class RangeStep { Each, Doubling };

// A list of whole numbers in [least, most], or a range FROM..TO; `what` says what the list holds,
// for the error about an empty one.
std::optional<std::vector<std::uint32_t>> read_numbers(YamlReader& read, const YamlValue& value, std::string_view key,
                                                       std::pair<std::uint32_t, std::uint32_t> bounds,
                                                       std::string_view what, RangeStep step = RangeStep::Each);

// The method kinds, and the keys a `method:` of each kind takes (`kind` included).
const std::vector<std::string_view>& kind_names();
const std::vector<std::string_view>& keys_of(MethodKind kind);

// RFC 2544's frame sizes for Ethernet (section 9.1) less their FCS, for a throughput search that
// names none.
const std::vector<std::uint32_t>& rfc2544_frame_sizes();

}  // namespace tusk::method_keys
