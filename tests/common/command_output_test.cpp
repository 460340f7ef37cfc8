// Running a port tool (lldpcli, ethtool) with a deadline and a cap on what it prints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>

#include "common/command_output.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

TEST(CommandOutput, ReadsOutputErrorAndExitStatus) {
  const auto result = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"}, 5s, 1024);
  EXPECT_EQ(result.out, "out\n");
  EXPECT_EQ(result.err, "err\n");
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.failure("sh"), "sh: exit 3: err");
}

// Issue 63, before: a tool inherited every descriptor the controller had open (listening sockets,
// agents' connections), and a child it left behind kept them after the controller was gone.
TEST(CommandOutput, AToolInheritsOnlyItsStdinStdoutAndStderr) {
  int pipe_fds[2] = {-1, -1};
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ASSERT_EQ(::dup2(pipe_fds[0], 77), 77);  // not close-on-exec, as a careless open would leave it
  const auto result = run_command({"sh", "-c", "test -e /proc/self/fd/77 && echo open || echo closed"}, 5s, 1024);
  ::close(77);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  EXPECT_EQ(result.out, "closed\n") << result.err;
}

TEST(CommandOutput, AProgramThatHangsIsKilledAtTheDeadline) {
  const auto began = std::chrono::steady_clock::now();
  const auto result = run_command({"sleep", "30"}, 200ms, 1024);
  EXPECT_LT(std::chrono::steady_clock::now() - began, 5s);
  EXPECT_TRUE(result.timed_out);
  EXPECT_THAT(result.failure("sleep"), HasSubstr("no answer in time"));
}

TEST(CommandOutput, OutputWithoutEndIsCutAtTheCapAndKilledAtTheDeadline) {
  const auto result = run_command({"yes"}, 300ms, 4096);
  EXPECT_EQ(result.out.size(), 4096u);
  EXPECT_TRUE(result.truncated);
  EXPECT_TRUE(result.timed_out);
}

TEST(CommandOutput, AMissingProgramIsSaid) {
  const auto result = run_command({"tusk-no-such-program"}, 1s, 1024);
  EXPECT_FALSE(result.ok());
  EXPECT_THAT(result.failure("tusk-no-such-program"), HasSubstr("tusk-no-such-program: "));
}

}  // namespace
}  // namespace tusk
