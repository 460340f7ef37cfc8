// The schema of a profile's tests, internal to the controller: which keys a test may set, which
// engine each belongs to, how each is read into a TestSpec, and the defaults a test starts from.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/units.hpp"
#include "common/yaml_reader.hpp"
#include "controller/profile/profile.hpp"

namespace tusk {
struct EngineSlice;
}

namespace tusk::profile_schema {

// "an rdma key", "a dpdk key".
std::string with_article(std::string_view engine);

// Where a test's value came from: the test itself or `defaults`.
struct Origin {
  YamlPos pos;
  std::string text;
  bool from_defaults = false;
};

// A test while its keys are being read: the spec plus what the cross-field checks need.
struct TestDraft {
  TestSpec spec;
  std::optional<units::Rate> rate;
  // Both engines spread a peer's traffic over ECMP paths (flows or QPs); each slice's check turns
  // these into its count.
  std::optional<std::uint32_t> ecmp_paths;
  std::optional<double> coverage;
  // Both engines trace their flows' paths (probes per second); each slice's check stores it.
  std::optional<std::uint32_t> trace_rate;
  std::map<std::string, Origin, std::less<>> origins;  // keys that were read successfully
  std::set<std::string, std::less<>> written;          // keys set, whether readable or not

  const Origin* origin(std::string_view key) const {
    const auto found = origins.find(key);
    return found == origins.end() ? nullptr : &found->second;
  }
};

struct ReadContext {
  YamlReader& read;
  std::optional<std::string> engine;  // the test's engine, when known
  bool from_defaults = false;
};

using ApplyKey = bool (*)(ReadContext&, const YamlValue&, TestDraft&);

// What the cross-field checks of tests need from the rest of the profile.
struct ProfileContext {
  SafetyCaps safety;
  std::string max_rate_text = "0";
  std::string max_duration_text = "24h";
  std::optional<std::uint32_t> agent_count;  // when the selection fixes it
};

// One test's cross-field checks, as an engine runs them (EngineSlice::check): the test being read,
// the profile's caps, and where to report a problem with one of its keys (`origin`: where the
// value came from, the test or defaults; nullptr for the test itself).
struct TestCheck {
  TestDraft& draft;
  const ProfileContext& profile;
  std::function<void(std::string_view key, const Origin* origin, std::string message)> fail;
};

// Stores the result of reading into the draft when there is one; what every key's reader returns.
template <typename T, typename Store>
bool store(const std::optional<T>& value, TestDraft& draft, Store store_value) {
  if (!value) return false;
  store_value(draft, *value);
  return true;
}

// A key a test may set: which engine it belongs to ("" for both) and how to read it.
struct TestKey {
  std::string_view name;
  std::string_view engine;
  ApplyKey apply;
};

// The engines' names, from the engine table (controller/engines/).
std::vector<std::string_view> engine_names();
// Whether tests of `engine` measure what the threshold `threshold_key` judges.
bool engine_measures(std::string_view engine, std::string_view threshold_key);
// The first engine that measures it, or nullptr.
const EngineSlice* engine_measuring(std::string_view threshold_key);

// nullptr when no test may set `name`.
const TestKey* find_test_key(std::string_view name);
std::vector<std::string_view> test_key_names();

// Keys of which a test (or `defaults`) may set only one. A test that sets either inherits neither.
struct Alternatives {
  std::string_view single;
  std::string_view sweep;
};

// The pair `key` belongs to, or nullptr.
const Alternatives* alternatives_of(std::string_view key);
// The other key of `key`'s pair, if it has one.
std::optional<std::string_view> alternative_of(std::string_view key);

// A TestSpec holding every default the schema promises for a test of `engine`, before any key is
// read; without a known engine, no engine parameters (its keys then make them as they are read).
TestSpec default_test_spec(const std::optional<std::string>& engine);

}  // namespace tusk::profile_schema
