// The EAL's command line the agent's options make: ordinary memory by default, hugepages on
// request, and a hugetlbfs mount of the agent's own for a non-root agent (the systemd unit's).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "agent/dpdk/eal.hpp"

namespace tusk::dpdk {
namespace {

using ::testing::Contains;
using ::testing::IsSupersetOf;
using ::testing::Not;

TEST(EalArguments, OrdinaryMemoryUnlessHugepagesAreAskedFor) {
  EalOptions options;
  options.memory_mb = 128;
  EXPECT_THAT(eal_arguments(options), IsSupersetOf({"--no-huge", "-m", "128", "--no-shconf"}));
  options.use_hugepages = true;
  EXPECT_THAT(eal_arguments(options), Not(Contains("--no-huge")));
  EXPECT_THAT(eal_arguments(options), Not(Contains("--huge-dir")));
}

TEST(EalArguments, AHugeDirIsPassedToTheEalWithTheHugepages) {
  EalOptions options;
  options.use_hugepages = true;
  options.huge_dir = "/dev/hugepages-tusk";
  const auto args = eal_arguments(options);
  const auto at = std::find(args.begin(), args.end(), "--huge-dir");
  ASSERT_NE(at, args.end());
  ASSERT_NE(at + 1, args.end());
  EXPECT_EQ(*(at + 1), "/dev/hugepages-tusk");
  EXPECT_THAT(args, Not(Contains("--no-huge")));
}

}  // namespace
}  // namespace tusk::dpdk
