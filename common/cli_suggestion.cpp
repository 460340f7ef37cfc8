#include "common/cli_suggestion.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <string_view>

#include "common/did_you_mean.hpp"
#include "common/printable.hpp"

namespace tusk {
namespace {

// `app`'s option called `name` ("--wait", "-h"), looking up through parents whose options a
// subcommand takes too (fallthrough), or null.
const CLI::Option* option_named(const CLI::App& app, std::string_view name) {
  for (const CLI::App* place = &app; place != nullptr;
       place = place->get_fallthrough() ? place->get_parent() : nullptr) {
    for (const CLI::Option* option : place->get_options()) {
      if (name.starts_with("--")) {
        for (const auto& long_name : option->get_lnames()) {
          if (name.substr(2) == long_name) return option;
        }
      } else {
        for (const auto& short_name : option->get_snames()) {
          if (name.substr(1) == short_name) return option;
        }
      }
    }
  }
  return nullptr;
}

std::string place_of(const CLI::App& app) {
  return app.get_parent() == nullptr ? std::string() : fmt::format(" of '{}'", app.get_name());
}

}  // namespace

std::optional<std::string> cli_suggestion(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* place = &app;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") return std::nullopt;  // the rest are positionals
    if (word.size() > 1 && word[0] == '-' && word[1] != '\0' && !(std::isdigit(static_cast<unsigned char>(word[1])))) {
      const std::string name = word.substr(0, word.find('='));
      if (const CLI::Option* option = option_named(*place, name)) {
        // Its value is the next word, unless it came with '='.
        if (option->get_expected_min() > 0 && name.size() == word.size()) ++i;
        continue;
      }
      if (!name.starts_with("--")) return std::nullopt;  // short option clusters: CLI11's message says it
      std::vector<std::string> names;
      for (const CLI::Option* option : place->get_options()) {
        for (const auto& long_name : option->get_lnames()) names.push_back("--" + long_name);
      }
      const std::vector<std::string_view> candidates(names.begin(), names.end());
      const auto match = closest_match(name, candidates);
      if (!match) return fmt::format("unknown option '{}'{}", printable(name), place_of(*place));
      return fmt::format("unknown option '{}'{}; did you mean '{}'?", printable(name), place_of(*place), *match);
    }
    const auto subcommands = place->get_subcommands([](const CLI::App*) { return true; });
    bool entered = false;
    for (const CLI::App* subcommand : subcommands) {
      if (subcommand->check_name(word)) {
        place = subcommand;
        entered = true;
        break;
      }
    }
    if (entered || subcommands.empty() || place->get_require_subcommand_min() == 0) continue;
    // A word where a command must be: the command it was probably meant to be.
    std::vector<std::string> names;
    for (const CLI::App* subcommand : subcommands) names.push_back(subcommand->get_name());
    const std::vector<std::string_view> candidates(names.begin(), names.end());
    const auto match = closest_match(word, candidates);
    if (!match) return fmt::format("unknown command '{}'{}", printable(word), place_of(*place));
    return fmt::format("unknown command '{}'{}; did you mean '{}'?", printable(word), place_of(*place), *match);
  }
  return std::nullopt;
}

int usage_error(const CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  if (error.get_exit_code() != static_cast<int>(CLI::ExitCodes::Success)) {
    const std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
    if (const auto suggestion = cli_suggestion(app, args)) {
      std::cerr << app.get_name() << ": " << *suggestion << "\nRun with --help for more information.\n";
      return error.get_exit_code();
    }
  }
  return app.exit(error);
}

}  // namespace tusk
