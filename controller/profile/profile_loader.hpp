// Reads a YAML profile into the typed Profile, checking everything that can be checked without
// the agents: keys, types, units, ranges, engine-specific keys and the safety caps.
//
// All problems in a file are collected and reported together, each with its file:line:column and
// field path, so an engineer fixes a profile in one pass rather than one error per run.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/yaml_reader.hpp"
#include "controller/profile/profile.hpp"

namespace tusk {

// One problem in a profile: its position, field path and message. to_string() gives
// "rack.yaml:12:5: tests[0].mesage_size: unknown key (did you mean 'message_size'?)".
using ProfileError = YamlError;

class ProfileInvalid : public std::runtime_error {
 public:
  explicit ProfileInvalid(std::vector<ProfileError> errors);
  const std::vector<ProfileError>& errors() const { return errors_; }

 private:
  std::vector<ProfileError> errors_;
};

// Throws ProfileInvalid, also when the file cannot be read.
Profile load_profile_file(const std::string& path);

// `file_name` is used only in positions and Profile::file. Throws ProfileInvalid.
Profile load_profile_text(std::string_view yaml_text, const std::string& file_name);

}  // namespace tusk
