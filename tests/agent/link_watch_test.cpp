// A port's link state over a test: downs, ups with how long the link was down, and the time down.
#include "agent/link_watch.hpp"

#include <gtest/gtest.h>

using namespace tusk;

constexpr std::int64_t kMs = 1'000'000;

TEST(LinkWatch, AnUpLinkThatStaysUpReportsNothing) {
  LinkWatch watch;
  EXPECT_FALSE(watch.on_poll(true, 1 * kMs));
  EXPECT_FALSE(watch.on_poll(true, 2 * kMs));
  EXPECT_EQ(watch.downs(), 0u);
  EXPECT_EQ(watch.down_ns(3 * kMs), 0);
}

TEST(LinkWatch, AFlapIsADownThenAnUpThatSaysHowLongItWasDown) {
  LinkWatch watch;
  watch.on_poll(true, 0);
  const auto down = watch.on_poll(false, 100 * kMs);
  ASSERT_TRUE(down);
  EXPECT_FALSE(down->up);
  EXPECT_EQ(down->at_ns, 100 * kMs);
  EXPECT_FALSE(watch.on_poll(false, 600 * kMs)) << "still down: no new event";
  EXPECT_EQ(watch.down_ns(600 * kMs), 500 * kMs) << "an open interval counts up to now";
  const auto up = watch.on_poll(true, 1100 * kMs);
  ASSERT_TRUE(up);
  EXPECT_TRUE(up->up);
  EXPECT_EQ(up->down_for_ns, 1000 * kMs);
  EXPECT_EQ(watch.downs(), 1u);
  EXPECT_EQ(watch.down_ns(5000 * kMs), 1000 * kMs) << "closed: no longer growing";
}

TEST(LinkWatch, TwoFlapsAddUpAndALinkDownAtTheStartIsADown) {
  LinkWatch watch;
  ASSERT_TRUE(watch.on_poll(false, 0));
  watch.on_poll(true, 300 * kMs);
  watch.on_poll(false, 1000 * kMs);
  watch.on_poll(true, 1200 * kMs);
  EXPECT_EQ(watch.downs(), 2u);
  EXPECT_EQ(watch.down_ns(2000 * kMs), 500 * kMs);
}
