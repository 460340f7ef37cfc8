// A child process for end-to-end tests: started with posix_spawn, output to a log file, killed
// (SIGKILL) in the destructor if still running so a failing test leaves nothing behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tusk::testing {

class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::string& log_path,
          const std::map<std::string, std::string>& extra_env = {});
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // The exit code, or nullopt if it did not exit in time (or died by a signal: -signal).
  std::optional<int> wait(std::chrono::milliseconds timeout);
  void signal(int signal_number);
  bool running();
  const std::string& log_path() const { return log_path_; }
  pid_t pid() const { return pid_; }
  std::string log() const;

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::string log_path_;
};

// Polls `path` until it contains `needle` or the timeout passes.
bool wait_for_text(const std::string& path, const std::string& needle, std::chrono::milliseconds timeout);
std::string read_file(const std::string& path);
// A TCP port that was free a moment ago, from below the ephemeral range (no outgoing connection
// takes it meanwhile).
int free_port();
// A new directory /tmp/<prefix>-XXXXXX, for one test's logs, certificates and reports.
std::string make_scratch_dir(const std::string& prefix);
// A lab CA, a controller certificate (for `controller_names`, the addresses agents dial; the
// script's defaults when empty) and one per agent name, in `dir`, by scripts/make-certs.sh.
bool make_certs(const std::string& dir, const std::vector<std::string>& agents,
                const std::vector<std::string>& controller_names = {});
// make_certs' files, made once per process for the same names and copied into `dir` after that:
// for a lab fixture whose every test needs certificates but none a CA of its own (a process
// running a suite made the same set anew for each of its tests).
bool copy_of_certs(const std::string& dir, const std::vector<std::string>& agents,
                   const std::vector<std::string>& controller_names = {});

}  // namespace tusk::testing
