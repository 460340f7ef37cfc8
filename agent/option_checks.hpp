// Checks for tusk-agent's options that run wherever a value comes from (the command line or the
// configuration file), so a bad value is reported where it was written and nothing starts.
#pragma once

#include <CLI/CLI.hpp>

#include <exception>
#include <string>
#include <utility>

namespace tusk {

// The option's text must be accepted by `parse`, which throws with the reason when it is not.
template <typename Parse>
CLI::Validator parsed_by(std::string description, Parse parse) {
  return CLI::Validator(
      [parse = std::move(parse)](std::string& text) {
        try {
          parse(text);
          return std::string();
        } catch (const std::exception& e) {
          return std::string(e.what());
        }
      },
      std::move(description));
}

}  // namespace tusk
