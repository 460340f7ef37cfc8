// A profile written in a test as a raw string (see yaml_errors.hpp), loaded as the file "bad.yaml"
// would be, and the errors its load reports, as the user reads them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "controller/profile/profile_loader.hpp"
#include "tests/support/yaml_errors.hpp"

namespace tusk::testing {

inline Profile load_profile_yaml(std::string_view yaml) {
  return load_profile_text(text_of(yaml), "bad.yaml");
}

// Every error for `yaml`, or nothing if it loads.
inline std::vector<std::string> profile_errors(std::string_view yaml) {
  return errors_thrown<ProfileInvalid>([&] { load_profile_yaml(yaml); });
}

// The one error for `yaml`; anything else fails the test.
inline std::string profile_error(std::string_view yaml) {
  return only_error(profile_errors(yaml));
}

}  // namespace tusk::testing
