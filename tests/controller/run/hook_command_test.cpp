// A profile's hook command (link_failure's down and up, actions' exec): run with /bin/sh in a
// process group of its own, with only stdin, stdout and stderr of the controller's descriptors.
#include "controller/run/hook_command.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace tusk {
namespace {

using namespace std::chrono_literals;

// Issue 63, before: hooks inherited the controller's listening sockets and connections, so a
// hook's background child could hold the metrics port after the controller exited.
TEST(HookCommand, AHookInheritsNoDescriptorButTheThreeAndGetsItsEnvironment) {
  const std::string out = ::testing::TempDir() + "tusk-hook-" + std::to_string(::getpid()) + ".txt";
  int pipe_fds[2] = {-1, -1};
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ASSERT_EQ(::dup2(pipe_fds[1], 78), 78);  // not close-on-exec
  {
    HookCommand hook("{ test -e /proc/self/fd/78 && echo open || echo closed; echo \"$TUSK_LINK\"; } > " + out,
                     {{"TUSK_LINK", "leaf1:swp3 <-> spine2:swp1"}});
    EXPECT_EQ(hook.wait(10s), 0);
  }
  ::close(78);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  std::ifstream file(out);
  const std::string text((std::istreambuf_iterator<char>(file)), {});
  EXPECT_EQ(text, "closed\nleaf1:swp3 <-> spine2:swp1\n");
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace tusk
