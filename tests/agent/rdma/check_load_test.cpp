// The share of the RDMA datapath thread that checking payloads takes, and what is said of it.
#include "agent/rdma/check_load.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace tusk::rdma {
namespace {

// 40 GB/s checked in a second at 40 GB/s a core: the whole thread, and a sample of one in four
// would take a quarter of it.
TEST(CheckLoad, ACheckThatTakesTheWholeThreadIsSaidWithASampleThatWouldNot) {
  const auto notice = check_load_notice(40e9, 1.0, 1 / 40.0, 1, 65536);
  ASSERT_TRUE(notice.has_value());
  EXPECT_NE(notice->find("about 100 % of the RDMA datapath thread (40.00 GB/s checked; this core checks 40.00 GB/s "
                         "of 65536 B messages)"),
            std::string::npos)
      << *notice;
  EXPECT_NE(notice->find("check_every: 4 would check one message in 4"), std::string::npos) << *notice;
  // Already sampling one in four and still 60 %: one in ten.
  const auto still = check_load_notice(24e9, 1.0, 1 / 40.0, 4, 65536);
  ASSERT_TRUE(still.has_value());
  EXPECT_NE(still->find("check_every: 10 "), std::string::npos) << *still;
}

TEST(CheckLoad, ACheckUnderHalfTheThreadOrNothingMeasuredSaysNothing) {
  EXPECT_FALSE(check_load_notice(10e9, 1.0, 1 / 40.0, 1, 4096).has_value());  // a quarter
  EXPECT_FALSE(check_load_notice(0, 1.0, 1 / 40.0, 1, 4096).has_value());
  EXPECT_FALSE(check_load_notice(40e9, 0, 1 / 40.0, 1, 4096).has_value());
  EXPECT_FALSE(check_load_notice(40e9, 1.0, 0, 1, 4096).has_value());
}

// Before the start: a 400G port's 50 GB/s at 40 GB/s a core would take 125 % of the thread; one
// message in five would take a quarter. Paced senders asking 10 GB/s in all need no sample.
TEST(CheckLoad, BeforeTheStartAPortFasterThanTheCheckIsSaidAndAPacedOneIsNot) {
  const auto notice = check_capacity_notice(50e9, "mlx5_0/1 at 400 Gb/s", 1 / 40.0, 1, 65536);
  ASSERT_TRUE(notice.has_value());
  EXPECT_NE(notice->find("this agent may receive 50.00 GB/s (mlx5_0/1 at 400 Gb/s) and one core checks 40.00 GB/s of "
                         "65536 B messages: checking every payload would take about 125 %"),
            std::string::npos)
      << *notice;
  EXPECT_NE(notice->find("check_every: 5 would check one message in 5"), std::string::npos) << *notice;
  EXPECT_FALSE(check_capacity_notice(10e9, "4 senders at 20 Gb/s each", 1 / 40.0, 1, 65536).has_value());
  // A sample already asked for counts: one in four of 50 GB/s is a third of the thread.
  EXPECT_FALSE(check_capacity_notice(50e9, "mlx5_0/1 at 400 Gb/s", 1 / 40.0, 4, 65536).has_value());
  EXPECT_FALSE(check_capacity_notice(0, "a port of unknown speed", 1 / 40.0, 1, 65536).has_value());
}

TEST(CheckLoad, ThisCoresCheckRateIsMeasuredForTheMessageSize) {
  for (const std::size_t size : {std::size_t{64}, std::size_t{65536}, std::size_t{1} << 30}) {
    const double ns = check_ns_per_byte(size);
    EXPECT_GT(ns, 0) << size;
    EXPECT_TRUE(std::isfinite(ns)) << size;
  }
}

}  // namespace
}  // namespace tusk::rdma
