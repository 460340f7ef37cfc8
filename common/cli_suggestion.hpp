// A did-you-mean for a command line CLI11 refused: "tusk-controller validat x.yaml" is told
// "unknown command 'validat'; did you mean 'validate'?", not "A subcommand is required", and an
// option typo ("run --wiat 5s") the option it was probably meant to be.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace tusk {

// The first word of `args` (argv without the program's name) that is neither a command nor an
// option of `app` where it stands, said with the closest command or option of that place, or
// nothing when every word is known (the error is another one) or nothing is close to the unknown one.
std::optional<std::string> cli_suggestion(const CLI::App& app, const std::vector<std::string>& args);

// What a program does with CLI11's `error` for argv: help and version printed as CLI11 prints
// them (0), a typo said with its did-you-mean, anything else as CLI11 says it. Returns app.exit's code.
int usage_error(const CLI::App& app, const CLI::ParseError& error, int argc, char** argv);

}  // namespace tusk
