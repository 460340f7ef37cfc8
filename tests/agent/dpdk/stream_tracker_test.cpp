#include "agent/dpdk/stream_tracker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

namespace tusk::dpdk {
namespace {

using Counts = StreamTracker::Counts;

void feed(StreamTracker& tracker, std::uint64_t first, std::uint64_t end) {
  for (std::uint64_t seq = first; seq < end; ++seq) tracker.on_frame(seq, false, 0);
}

void feed(StreamTracker& tracker, const std::vector<std::uint64_t>& seqs) {
  for (std::uint64_t seq : seqs) tracker.on_frame(seq, false, 0);
}

// ---- the basics --------------------------------------------------------------------------------

TEST(StreamTracker, StartsEmpty) {
  StreamTracker tracker;
  EXPECT_EQ(tracker.counts(), Counts{});
}

TEST(StreamTracker, CleanInOrderStream) {
  StreamTracker tracker;
  feed(tracker, 0, 10'000);
  Counts expected;
  expected.received = 10'000;
  EXPECT_EQ(tracker.counts(), expected);
}

TEST(StreamTracker, SingleLoss) {
  StreamTracker tracker;
  feed(tracker, 0, 50);
  feed(tracker, 51, 100);
  const Counts c = tracker.counts();
  EXPECT_EQ(c.received, 99u);
  EXPECT_EQ(c.lost, 1u);
  EXPECT_EQ(c.reordered, 0u);
  EXPECT_EQ(c.duplicates, 0u);
}

TEST(StreamTracker, LossOfTheFirstFramesCounts) {
  // Sequence numbers start at 0, so a stream first seen at 5 has lost 0..4.
  StreamTracker tracker;
  feed(tracker, 5, 10);
  EXPECT_EQ(tracker.counts().lost, 5u);
  EXPECT_EQ(tracker.counts().received, 5u);
}

TEST(StreamTracker, LossLaterFilledByAReorderedFrameIsNotLost) {
  StreamTracker tracker;
  feed(tracker, {0, 1, 3, 4});
  EXPECT_EQ(tracker.counts().lost, 1u);
  tracker.on_frame(2, false, 0);
  const Counts c = tracker.counts();
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.reordered, 1u);
  EXPECT_EQ(c.received, 5u);
}

TEST(StreamTracker, DuplicateIsCountedAndNotReceivedTwice) {
  StreamTracker tracker;
  feed(tracker, {0, 1, 1, 2, 0, 2});
  const Counts c = tracker.counts();
  EXPECT_EQ(c.received, 3u);
  EXPECT_EQ(c.duplicates, 3u);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.reordered, 0u);  // a late duplicate is a duplicate, not a reorder
}

TEST(StreamTracker, DuplicateOfAReorderedFrameIsADuplicate) {
  StreamTracker tracker;
  feed(tracker, {0, 2, 1, 1});
  const Counts c = tracker.counts();
  EXPECT_EQ(c.received, 3u);
  EXPECT_EQ(c.reordered, 1u);
  EXPECT_EQ(c.duplicates, 1u);
}

// ---- the reorder window ------------------------------------------------------------------------

TEST(StreamTracker, WindowIsRoundedUpToAPowerOfTwoOfAtLeast64) {
  EXPECT_EQ(StreamTracker().reorder_window(), 1024u);
  EXPECT_EQ(StreamTracker(1000).reorder_window(), 1024u);
  EXPECT_EQ(StreamTracker(1).reorder_window(), 64u);
  EXPECT_EQ(StreamTracker(65).reorder_window(), 128u);
  EXPECT_THROW(StreamTracker(0), std::invalid_argument);
  EXPECT_THROW(StreamTracker(StreamTracker::kMaxReorderWindow + 1), std::invalid_argument);
}

TEST(StreamTracker, ReorderAtTheEdgeOfTheWindow) {
  StreamTracker inside(64);
  feed(inside, 1, 64);           // highest 63
  inside.on_frame(0, false, 0);  // 63 behind: still inside
  EXPECT_EQ(inside.counts().reordered, 1u);
  EXPECT_EQ(inside.counts().lost, 0u);
  EXPECT_EQ(inside.counts().too_late, 0u);

  StreamTracker outside(64);
  feed(outside, 1, 65);           // highest 64
  outside.on_frame(0, false, 0);  // 64 behind: out of the window
  EXPECT_EQ(outside.counts().reordered, 0u);
  EXPECT_EQ(outside.counts().lost, 1u);
  EXPECT_EQ(outside.counts().too_late, 1u);
  EXPECT_EQ(outside.counts().received, 64u);
}

TEST(StreamTracker, DuplicateOfAVeryOldSeqOutsideTheWindowIsTooLateNotReceived) {
  // Out of the window the tracker cannot tell a duplicate from a very late frame, so it books it as
  // too_late: received, lost and duplicates are untouched.
  StreamTracker tracker(64);
  feed(tracker, 0, 1000);
  tracker.on_frame(5, false, 0);
  Counts expected;
  expected.received = 1000;
  expected.too_late = 1;
  EXPECT_EQ(tracker.counts(), expected);
}

TEST(StreamTracker, GenuinelyLostFrameArrivingTooLateStaysLost) {
  StreamTracker tracker(64);
  feed(tracker, 0, 10);
  feed(tracker, 11, 1000);
  tracker.on_frame(10, false, 0);
  const Counts c = tracker.counts();
  EXPECT_EQ(c.lost, 1u);
  EXPECT_EQ(c.too_late, 1u);
  EXPECT_EQ(c.received, 999u);
  EXPECT_EQ(c.reordered, 0u);
}

TEST(StreamTracker, RingSlotsAreReusedCleanlyAfterTheWindowMoves) {
  // With a 64-frame window seq 64 shares a ring slot with seq 0 (and 128 with 64): the slot must
  // be cleared as the window passes, or 64 would look like a duplicate of 0.
  StreamTracker tracker(64);
  feed(tracker, 0, 64);
  feed(tracker, 65, 128);          // 64 missing; highest 127
  tracker.on_frame(64, false, 0);  // 63 behind: fills the gap
  feed(tracker, 128, 200);
  tracker.on_frame(150, false, 0);  // repeats inside the window
  tracker.on_frame(199, false, 0);
  const Counts c = tracker.counts();
  EXPECT_EQ(c.received, 200u);
  EXPECT_EQ(c.reordered, 1u);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.duplicates, 2u);
}

TEST(StreamTracker, PairwiseSwapsAreReorderedNotLost) {
  StreamTracker tracker;
  for (std::uint64_t seq = 0; seq < 1000; seq += 2) feed(tracker, {seq + 1, seq});
  const Counts c = tracker.counts();
  EXPECT_EQ(c.received, 1000u);
  EXPECT_EQ(c.reordered, 500u);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.duplicates, 0u);
}

// ---- errors and bursts -------------------------------------------------------------------------

TEST(StreamTracker, ErrorBurstsAreRunsInArrivalOrder) {
  StreamTracker tracker;
  // E E . E . . E E E .
  const bool pattern[] = {true, true, false, true, false, false, true, true, true, false};
  std::uint64_t seq = 0;
  for (bool errored : pattern) {
    tracker.on_frame(seq, errored, errored ? 3 : 0);
    ++seq;
  }
  const Counts c = tracker.counts();
  EXPECT_EQ(c.errored_frames, 6u);
  EXPECT_EQ(c.bit_errors, 18u);
  EXPECT_EQ(c.error_bursts, 3u);
  EXPECT_EQ(c.longest_burst, 3u);
  EXPECT_EQ(c.received, 10u);
}

TEST(StreamTracker, BitErrorsMakeAFrameErroredWhateverTheFlag) {
  StreamTracker tracker;
  tracker.on_frame(0, false, 2);
  tracker.on_frame(1, true, 0);  // errored without a bit count (e.g. a short payload)
  const Counts c = tracker.counts();
  EXPECT_EQ(c.errored_frames, 2u);
  EXPECT_EQ(c.bit_errors, 2u);
  EXPECT_EQ(c.error_bursts, 1u);
  EXPECT_EQ(c.longest_burst, 2u);
}

TEST(StreamTracker, LostFramesDoNotSplitABurst) {
  // Bursts follow arrival order: the lost frame 2 never arrived, so 1 and 3 are back to back.
  StreamTracker tracker;
  tracker.on_frame(0, false, 0);
  tracker.on_frame(1, true, 1);
  tracker.on_frame(3, true, 1);
  tracker.on_frame(4, false, 0);
  tracker.on_frame(5, true, 1);
  const Counts c = tracker.counts();
  EXPECT_EQ(c.error_bursts, 2u);
  EXPECT_EQ(c.longest_burst, 2u);
  EXPECT_EQ(c.lost, 1u);
}

TEST(StreamTracker, ErrorsOnADuplicateAreStillCounted) {
  StreamTracker tracker;
  tracker.on_frame(0, false, 0);
  tracker.on_frame(0, true, 5);
  const Counts c = tracker.counts();
  EXPECT_EQ(c.received, 1u);
  EXPECT_EQ(c.duplicates, 1u);
  EXPECT_EQ(c.errored_frames, 1u);
  EXPECT_EQ(c.bit_errors, 5u);
}

// ---- netem-like scenarios ----------------------------------------------------------------------

TEST(StreamTracker, TwoPercentRandomLossIsCountedExactly) {
  std::mt19937_64 rng(12345);
  std::bernoulli_distribution drop(0.02);
  StreamTracker tracker;
  constexpr std::uint64_t kFrames = 100'000;
  std::uint64_t dropped = 0;
  for (std::uint64_t seq = 0; seq < kFrames; ++seq) {
    if (seq + 1 < kFrames && drop(rng)) {  // keep the last one: tail loss is invisible by design
      ++dropped;
      continue;
    }
    tracker.on_frame(seq, false, 0);
  }
  const Counts c = tracker.counts();
  EXPECT_GT(dropped, 1800u);  // the seed really did drop about 2 %
  EXPECT_LT(dropped, 2200u);
  EXPECT_EQ(c.lost, dropped);
  EXPECT_EQ(c.received, kFrames - dropped);
  EXPECT_EQ(c.duplicates, 0u);
  EXPECT_EQ(c.reordered, 0u);
  EXPECT_EQ(c.errored_frames, 0u);
}

TEST(StreamTracker, TailLossIsInvisible) {
  StreamTracker tracker;
  feed(tracker, 0, 90);  // 90..99 were sent and lost
  EXPECT_EQ(tracker.counts().lost, 0u);
  EXPECT_EQ(tracker.counts().received, 90u);
}

// Like `netem loss 1% duplicate 1% delay ... reorder`: each frame (and each duplicate) is delayed by
// up to kMaxDelay frame times, then everything arrives in order of delivery time.
TEST(StreamTracker, NetemLossDuplicateAndReorderMatchAReferenceModel) {
  constexpr std::uint64_t kFrames = 100'000;
  constexpr double kMaxDelay = 300;  // well inside the 1024 window
  std::mt19937_64 rng(777);
  std::bernoulli_distribution drop(0.01);
  std::bernoulli_distribution duplicate(0.01);
  std::uniform_real_distribution<double> delay(0, kMaxDelay);
  std::bernoulli_distribution delayed(0.25);

  std::vector<std::pair<double, std::uint64_t>> arrivals;  // (delivery time, seq)
  std::uint64_t dropped = 0;
  std::uint64_t duplicated = 0;
  for (std::uint64_t seq = 0; seq < kFrames; ++seq) {
    if (seq + 1 < kFrames && drop(rng)) {
      ++dropped;
      continue;
    }
    const double t = static_cast<double>(seq);
    arrivals.emplace_back(delayed(rng) ? t + delay(rng) : t, seq);
    if (duplicate(rng)) {
      ++duplicated;
      arrivals.emplace_back(t + delay(rng), seq);
    }
  }
  std::stable_sort(arrivals.begin(), arrivals.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

  // Reference with unbounded memory: fine here because no frame is delayed past the window.
  std::set<std::uint64_t> seen;
  std::uint64_t highest = 0;
  std::uint64_t ref_reordered = 0;
  StreamTracker tracker;
  for (const auto& [time, seq] : arrivals) {
    if (seen.insert(seq).second && seq < highest) ++ref_reordered;
    highest = std::max(highest, seq);
    tracker.on_frame(seq, false, 0);
  }

  const Counts c = tracker.counts();
  EXPECT_GT(ref_reordered, 1000u);  // the scenario really reorders
  EXPECT_EQ(c.lost, dropped);
  EXPECT_EQ(c.received, kFrames - dropped);
  EXPECT_EQ(c.duplicates, duplicated);
  EXPECT_EQ(c.reordered, ref_reordered);
  EXPECT_EQ(c.too_late, 0u);
  EXPECT_EQ(c.errored_frames, 0u);
  EXPECT_EQ(c.error_bursts, 0u);
  EXPECT_EQ(c.restarts, 0u);
}

// ---- jumps and restarts ------------------------------------------------------------------------

TEST(StreamTracker, ForwardJumpIsCountedAsLoss) {
  // Headers are CRC-protected, so a jump forward means those frames really never came.
  StreamTracker tracker;
  feed(tracker, 0, 1000);
  feed(tracker, 1'000'000, 1'001'000);
  const Counts c = tracker.counts();
  EXPECT_EQ(c.received, 2000u);
  EXPECT_EQ(c.lost, 999'000u);
  EXPECT_EQ(c.restarts, 0u);
  EXPECT_EQ(c.too_late, 0u);
}

TEST(StreamTracker, ForwardJumpClearsTheWindowItSkips) {
  // After the jump the ring slots hold bits from before it; a skipped seq still inside the window
  // must read as missing, so its late arrival is a reorder, not a duplicate.
  StreamTracker tracker;
  feed(tracker, 0, 1000);
  tracker.on_frame(1'000'000, false, 0);
  tracker.on_frame(999'500, false, 0);
  tracker.on_frame(999'999, false, 0);
  const Counts c = tracker.counts();
  EXPECT_EQ(c.reordered, 2u);
  EXPECT_EQ(c.duplicates, 0u);
  EXPECT_EQ(c.lost, 998'998u);
  EXPECT_EQ(c.received, 1003u);
}

TEST(StreamTracker, HighestPossibleSeqDoesNotOverflow) {
  StreamTracker tracker;
  tracker.on_frame(0, false, 0);
  tracker.on_frame(std::numeric_limits<std::uint64_t>::max(), false, 0);
  EXPECT_EQ(tracker.counts().lost, std::numeric_limits<std::uint64_t>::max() - 1);
  EXPECT_EQ(tracker.counts().received, 2u);
}

TEST(StreamTracker, SenderRestartStartsANewEpoch) {
  StreamTracker tracker;
  feed(tracker, 0, 5000);
  feed(tracker, 5001, 10'000);  // one loss before the restart
  feed(tracker, 0, 100);        // the sender starts again at 0
  feed(tracker, 101, 5000);     // one loss after it
  const Counts c = tracker.counts();
  EXPECT_EQ(c.restarts, 1u);
  EXPECT_EQ(c.received, 9999u + 4999u);
  EXPECT_EQ(c.lost, 2u);
  EXPECT_EQ(c.too_late, 0u);
  EXPECT_EQ(c.duplicates, 0u);
  EXPECT_EQ(c.reordered, 0u);
}

TEST(StreamTracker, RestartIsConfirmedOnlyAfterARunOfFrames) {
  StreamTracker tracker;
  feed(tracker, 0, 10'000);
  feed(tracker, 0, StreamTracker::kRestartConfirmFrames - 1);
  EXPECT_EQ(tracker.counts().restarts, 0u);
  EXPECT_EQ(tracker.counts().too_late, StreamTracker::kRestartConfirmFrames - 1);
  tracker.on_frame(StreamTracker::kRestartConfirmFrames - 1, false, 0);
  EXPECT_EQ(tracker.counts().restarts, 1u);
  EXPECT_EQ(tracker.counts().too_late, 0u);
  EXPECT_EQ(tracker.counts().received, 10'000u + StreamTracker::kRestartConfirmFrames);
}

TEST(StreamTracker, RestartWithinTheWindowLooksLikeDuplicates) {
  StreamTracker tracker;
  feed(tracker, 0, 100);
  feed(tracker, 0, 100);
  const Counts c = tracker.counts();
  EXPECT_EQ(c.restarts, 0u);
  EXPECT_EQ(c.duplicates, 100u);
  EXPECT_EQ(c.received, 100u);
}

TEST(StreamTracker, StaleFramesInterleavedWithLiveTrafficAreNotARestart) {
  // A bad reorder (frames delayed far past the window) while the stream goes on.
  StreamTracker tracker;
  feed(tracker, 0, 10'000);
  for (std::uint64_t i = 0; i < 200; ++i) {
    tracker.on_frame(i, false, 0);
    tracker.on_frame(10'000 + i, false, 0);
  }
  const Counts c = tracker.counts();
  EXPECT_EQ(c.restarts, 0u);
  EXPECT_EQ(c.too_late, 200u);
  EXPECT_EQ(c.received, 10'200u);
  EXPECT_EQ(c.lost, 0u);
}

TEST(StreamTracker, ABlockOfStaleFramesFromMidStreamIsNotARestart) {
  // A restarted sender starts at 0; a released block from the middle of the stream does not.
  StreamTracker tracker;
  feed(tracker, 0, 100'000);
  feed(tracker, 50'000, 50'500);
  const Counts c = tracker.counts();
  EXPECT_EQ(c.restarts, 0u);
  EXPECT_EQ(c.too_late, 500u);
  EXPECT_EQ(c.received, 100'000u);
}

// ---- aggregation -------------------------------------------------------------------------------

TEST(StreamTracker, CountsAddUpAcrossStreams) {
  Counts a;
  a.received = 10;
  a.lost = 1;
  a.bit_errors = 4;
  a.error_bursts = 2;
  a.longest_burst = 3;
  Counts b;
  b.received = 5;
  b.duplicates = 2;
  b.error_bursts = 1;
  b.longest_burst = 7;
  a += b;
  EXPECT_EQ(a.received, 15u);
  EXPECT_EQ(a.lost, 1u);
  EXPECT_EQ(a.duplicates, 2u);
  EXPECT_EQ(a.bit_errors, 4u);
  EXPECT_EQ(a.error_bursts, 3u);
  EXPECT_EQ(a.longest_burst, 7u);  // the worst stream's, not a sum
}

}  // namespace
}  // namespace tusk::dpdk
