// Runs a program and reads what it prints, within a time and a size: for the tools an agent asks
// about its ports (lldpcli, ethtool), which may hang on a wedged daemon or print without end.
// The program is found on PATH, runs without a shell, and is killed at the deadline.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace tusk {

struct CommandOutput {
  std::string out;          // standard output, at most max_bytes
  std::string err;          // standard error, at most max_bytes
  int exit_status = -1;     // the exit code; -1 when it was killed, never ran or died by a signal
  bool timed_out = false;   // killed at the deadline
  bool truncated = false;   // printed more than max_bytes on either stream (the rest was read and dropped)
  std::string spawn_error;  // why it could not be started ("" when it was)
  bool ok() const { return spawn_error.empty() && !timed_out && exit_status == 0; }
  // "lldpcli: exit 1: unable to connect to socket" and the like, for a note; "" when ok().
  std::string failure(const std::string& program) const;
};

// `argv[0]` is looked up on PATH. Never throws for what the program does.
CommandOutput run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          std::size_t max_bytes);

}  // namespace tusk
