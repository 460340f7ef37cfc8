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

// A key a test may set: which engine it belongs to ("" for both) and how to read it.
struct TestKey {
  std::string_view name;
  std::string_view engine;
  ApplyKey apply;
};

extern const std::vector<std::string_view> kEngines;

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

// A TestSpec holding every default the schema promises, before any key is read.
TestSpec default_test_spec();

}  // namespace tusk::profile_schema
