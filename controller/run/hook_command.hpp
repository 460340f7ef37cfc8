// A command from the profile that the controller runs during a test (link_failure's `down`, which
// on a real fabric is the operator's own tool: a switch CLI, an API call): /bin/sh -c COMMAND in a
// process group of its own, with the run's names in its environment. Owned: a command still
// running when its owner goes (the run ended, was interrupted) is killed with its group, so no
// hook outlives the run that started it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace tusk {

class HookCommand {
 public:
  // Starts it; throws std::system_error naming the command when it cannot.
  HookCommand(const std::string& command, const std::map<std::string, std::string>& environment);
  HookCommand(const HookCommand&) = delete;
  HookCommand& operator=(const HookCommand&) = delete;
  ~HookCommand();

  // Its exit status once it has ended (128 + the signal for one killed), without waiting.
  std::optional<int> poll();
  // Waits up to `limit` for it to end; kills its group then, and gives nothing.
  std::optional<int> wait(std::chrono::milliseconds limit);

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

}  // namespace tusk
