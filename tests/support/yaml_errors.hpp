// Test helpers for position-aware loaders (profiles, model files): a YAML text written as a raw
// string that starts with a newline, so its first key is on line 1 and positions can be counted
// by eye, and the errors a load reports, as the user reads them.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace tusk::testing {

inline std::string text_of(std::string_view yaml) {
  if (!yaml.empty() && yaml.front() == '\n') yaml.remove_prefix(1);
  return std::string(yaml);
}

// Every error `load()` throws as `Invalid` (which has errors(), each with to_string()), or nothing.
template <class Invalid, class Load>
std::vector<std::string> errors_thrown(Load load) {
  try {
    load();
  } catch (const Invalid& invalid) {
    std::vector<std::string> lines;
    for (const auto& error : invalid.errors()) lines.push_back(error.to_string());
    return lines;
  }
  return {};
}

// The one error of `errors`; anything else fails the test.
inline std::string only_error(const std::vector<std::string>& errors) {
  if (errors.size() == 1) return errors.front();
  std::string all;
  for (const auto& error : errors) all += "\n  " + error;
  ADD_FAILURE() << "expected exactly one error, got " << errors.size() << ":" << all;
  return "";
}

}  // namespace tusk::testing
