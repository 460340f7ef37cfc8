#include "agent/dpdk/cpu_list.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tusk::dpdk {
namespace {

TEST(CpuList, RangesAndSinglesSortedWithoutDuplicates) {
  EXPECT_EQ(parse_cpu_list("0"), (std::vector<int>{0}));
  EXPECT_EQ(parse_cpu_list("0-1"), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_cpu_list("8-9,0-2,2,6"), (std::vector<int>{0, 1, 2, 6, 8, 9}));
}

TEST(CpuList, BadTextIsRefusedNamingThePart) {
  EXPECT_THROW(parse_cpu_list(""), std::invalid_argument);
  EXPECT_THROW(parse_cpu_list("3-1"), std::invalid_argument);
  try {
    parse_cpu_list("0,x");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "lcore list '0,x': 'x' is not a CPU number");
  }
}

}  // namespace
}  // namespace tusk::dpdk
