// tusk-agent's configuration file (/etc/tusk/agent.yaml): YAML whose keys are the agent's own
// command-line options, so the file and the flags can never disagree about what exists, what a
// value means or which values are refused. An option group named as a section ("DPDK") is a
// mapping in the file ("dpdk:"), its keys the flags without the section's prefix
// ("--dpdk-lcores" is dpdk: lcores:); "-" in a flag is "_" in a key. A flag given on the command
// line wins over the file.
#pragma once

#include <string>
#include <vector>

#include "common/yaml_reader.hpp"

namespace CLI {
class App;
}

namespace tusk {

struct ConfigFileLayout {
  std::vector<std::string> sections;     // option groups that are sections of the file
  std::vector<std::string> not_in_file;  // options only the command line takes: "--config"
  // Options whose value is a file: a relative one in the file is read from the file's own folder
  // (`tls: {ca: tls/ca.pem}` beside /etc/tusk/agent.yaml is /etc/tusk/tls/ca.pem), as a relative
  // one on the command line is read from the working directory.
  std::vector<std::string> paths;
};

// Gives each option the file sets the values written there, unless the command line gave that
// option already, so call it after CLI::App::parse. Returns every problem found (a file that
// cannot be read, bad YAML, an unknown key with the nearest valid one, the wrong kind of value, a
// value the option's own checks refuse), each with file:line:column and the key's path; an empty
// file sets nothing.
std::vector<YamlError> apply_config_file(CLI::App& app, const std::string& file, const ConfigFileLayout& layout);

// Every key the file may hold, "section.key" for a section's, in the order `--help` lists the
// options: for documentation and tests.
std::vector<std::string> config_file_keys(const CLI::App& app, const ConfigFileLayout& layout);

}  // namespace tusk
