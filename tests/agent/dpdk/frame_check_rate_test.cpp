// The frame check rate an agent measures of its own core as it starts, for its inventory and
// `plan --inventory` (issue 61): a rate of clean frames checked, at any frame size.
#include "agent/dpdk/frame_check_rate.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tusk::dpdk {
namespace {

TEST(FrameCheckRate, CleanFramesOfEverySizeAreCheckedAtARate) {
  // The frames are the pattern itself: a miscount would make the measure 0, "not known".
  for (const std::size_t frame : {std::size_t{0}, std::size_t{64}, std::size_t{1500}, std::size_t{9216}}) {
    const double ns = frame_check_ns_per_byte(frame);
    EXPECT_TRUE(std::isfinite(ns) && ns > 0) << frame << " B frames: " << ns << " ns a byte";
  }
}

}  // namespace
}  // namespace tusk::dpdk
