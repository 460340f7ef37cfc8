// The fabric lab (tests/lab/fabric-lab.sh) for a test: made in the constructor under its own id,
// removed in the destructor, its commands run with their output returned.
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include "tests/support/build_paths.hpp"

namespace tusk::testing {

class FabricLab {
 public:
  FabricLab(std::string id, const std::string& shape) : id_(std::move(id)) { run("up " + shape); }
  ~FabricLab() { std::system(command("down").c_str()); }
  FabricLab(const FabricLab&) = delete;
  FabricLab& operator=(const FabricLab&) = delete;

  // Runs a lab command and returns what it printed; throws when it fails.
  std::string run(const std::string& arguments) const {
    std::unique_ptr<FILE, decltype(&pclose)> pipe(popen(command(arguments).c_str(), "r"), &pclose);
    if (!pipe) throw std::runtime_error("cannot run the fabric lab");
    std::string output;
    std::array<char, 4096> buffer{};
    while (const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe.get()))
      output.append(buffer.data(), n);
    if (pclose(pipe.release()) != 0) throw std::runtime_error("fabric lab failed: " + arguments + "\n" + output);
    return output;
  }
  std::uint64_t counter(const std::string& link, const std::string& direction) const {
    return std::stoull(run("counter " + link + " " + direction));
  }
  std::string ns(const std::string& device) const { return id_ + "-" + device; }

  // The shell command that runs a lab command (for a profile's hook).
  std::string command(const std::string& arguments) const {
    return "TUSK_LAB_ID=" + id_ + " TUSK_LAB_TCX=" + tusk::build_paths::lab_tcx_bin() + " bash " +
           tusk::build_paths::source_dir() + "/tests/lab/fabric-lab.sh " + arguments + " 2>&1";
  }

 private:
  std::string id_;
};

}  // namespace tusk::testing
