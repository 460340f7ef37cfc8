#include "common/command_output.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace tusk {
namespace {

// A pipe's two ends, closed on scope exit unless handed on.
struct OwnedPipe {
  int read_end = -1, write_end = -1;
  OwnedPipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) == 0) {
      read_end = fds[0];
      write_end = fds[1];
    }
  }
  ~OwnedPipe() {
    if (read_end >= 0) close(read_end);
    if (write_end >= 0) close(write_end);
  }
  OwnedPipe(const OwnedPipe&) = delete;
  OwnedPipe& operator=(const OwnedPipe&) = delete;
  bool ok() const { return read_end >= 0; }
  void close_write() {
    if (write_end >= 0) close(write_end);
    write_end = -1;
  }
};

// Reads what is ready on `fd` into `into` (up to `max_bytes`, the rest dropped); false at EOF.
bool drain(int fd, std::string& into, std::size_t max_bytes, bool& truncated) {
  std::array<char, 8192> buffer{};
  const ssize_t n = read(fd, buffer.data(), buffer.size());
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  const std::size_t room = max_bytes > into.size() ? max_bytes - into.size() : 0;
  into.append(buffer.data(), std::min(room, static_cast<std::size_t>(n)));
  if (static_cast<std::size_t>(n) > room) truncated = true;
  return true;
}

}  // namespace

std::string CommandOutput::failure(const std::string& program) const {
  if (!spawn_error.empty()) return fmt::format("{}: {}", program, spawn_error);
  if (timed_out) return fmt::format("{}: no answer in time (killed)", program);
  if (exit_status == 0) return {};
  std::string reason = err.substr(0, err.find('\n'));
  return fmt::format("{}: exit {}{}", program, exit_status, reason.empty() ? "" : ": " + reason);
}

CommandOutput run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          std::size_t max_bytes) {
  CommandOutput result;
  if (argv.empty()) {
    result.spawn_error = "no program given";
    return result;
  }
  OwnedPipe out, err;
  if (!out.ok() || !err.ok()) {
    result.spawn_error = fmt::format("pipe: {}", std::strerror(errno));
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write_end, 1);
  posix_spawn_file_actions_adddup2(&actions, err.write_end, 2);
  // Only the three: a tool (or a child it leaves behind) holds none of the caller's sockets.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    result.spawn_error = std::strerror(spawned);
    return result;
  }
  out.close_write();
  err.close_write();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      result.timed_out = true;
      break;
    }
    std::array<pollfd, 2> fds{pollfd{out_open ? out.read_end : -1, POLLIN, 0},
                              pollfd{err_open ? err.read_end : -1, POLLIN, 0}};
    const int ready = poll(fds.data(), fds.size(), static_cast<int>(left));
    if (ready < 0 && errno != EINTR) break;
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
      out_open = drain(out.read_end, result.out, max_bytes, result.truncated);
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
      err_open = drain(err.read_end, result.err, max_bytes, result.truncated);
  }
  if (result.timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!result.timed_out && WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  return result;
}

}  // namespace tusk
