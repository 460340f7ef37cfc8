// A test's `localisation:` key (docs/profile.md, Localisation): `min_rate`, the noise floor of each
// kind of fault a link is named for, and `min_delay`, the delay a link may add unnamed, read into
// the test's LocalisationSettings.
#pragma once

#include <string_view>
#include <vector>

#include "controller/profile/profile_schema.hpp"

namespace tusk::localisation_keys {

// What `localisation:` and its `min_rate:` accept: the loader's keys, and what the reference
// documents (tests/controller/profile/profile_reference_test.cpp).
const std::vector<std::string_view>& keys();
const std::vector<std::string_view>& min_rate_keys();

bool read_localisation(profile_schema::ReadContext& context, const YamlValue& value, profile_schema::TestDraft& draft);

}  // namespace tusk::localisation_keys
