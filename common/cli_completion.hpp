// Bash completion generated from a program's own CLI11 definition, so that every subcommand and
// option the program has is completed and none it lacks is offered.
#pragma once

#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace tusk {

// A script for `source` or /usr/share/bash-completion/completions/<program>: subcommands, each
// one's options, the choices of options checked with CLI::IsMember, and file names for the rest.
std::string bash_completion(const CLI::App& app, std::string_view program);

}  // namespace tusk
