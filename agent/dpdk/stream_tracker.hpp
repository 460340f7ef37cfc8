// Receive-side accounting for one test stream: loss, duplicates, reordering and error bursts, worked
// out from the sequence numbers of the frames that arrive.
//
// One tracker per stream, owned by the RX lcore that receives the stream; not thread-safe. on_frame
// does no allocation and costs O(1) per frame, plus clearing the bits a forward jump skips (at most
// reorder_window / 64 words, amortised O(1) per sequence number).
//
// Sequence numbers start at 0 per stream. The tracker remembers which of the last reorder_window
// sequence numbers (counting back from the highest seen) have arrived, so within that window a late
// frame turns a counted loss back into a reordered frame and a repeat is a duplicate. Beyond it:
//
// - A frame older than the window cannot be classified (duplicate, or very late?). It is counted as
//   too_late and not as received; a gap it would have filled stays lost. This is the conservative
//   choice: a late duplicate can never make received exceed what was sent.
// - A sender restart (sequence numbers back near 0 from far beyond the window) first shows as
//   too_late frames. Once kRestartConfirmFrames of them in a row (no in-window frame between) rise
//   from below reorder_window, the tracker starts a new epoch: the earlier epoch's losses are kept,
//   those frames move from too_late to received, and counting goes on from the new sequence numbers.
//   A restart that comes back within the window is indistinguishable from duplicates and is counted
//   as such.
// - A forward jump is counted as loss: headers are CRC-protected, so a jump is real.
//
// Frames lost after the highest sequence number received are invisible here; compare received with
// the sender's TX count for those.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tusk::dpdk {

class StreamTracker {
 public:
  static constexpr std::size_t kDefaultReorderWindow = 1024;
  static constexpr std::size_t kMaxReorderWindow = std::size_t{1} << 24;
  static constexpr std::size_t kRestartConfirmFrames = 64;

  struct Counts {
    std::uint64_t received = 0;    // distinct sequence numbers accepted
    std::uint64_t lost = 0;        // gaps below the highest seen that are not (yet) filled
    std::uint64_t duplicates = 0;  // repeats of a sequence number already received, within the window
    std::uint64_t reordered = 0;   // arrived after a higher sequence number and filled its gap
    std::uint64_t too_late = 0;    // older than the reorder window: neither received nor duplicate
    // Errors are counted on every arrival, duplicates included: they are what the link did to the
    // bits, whatever the sequence bookkeeping says. So errored_frames can exceed received.
    std::uint64_t errored_frames = 0;
    std::uint64_t bit_errors = 0;
    std::uint64_t error_bursts = 0;   // runs of consecutive errored frames in arrival order
    std::uint64_t longest_burst = 0;  // frames in the longest such run
    std::uint64_t restarts = 0;       // sender restarts detected (see above)

    bool operator==(const Counts&) const = default;
    // Summing streams into port totals: longest_burst takes the maximum.
    Counts& operator+=(const Counts& other);
  };

  // The window is rounded up to a power of two, at least 64, so the ring indexes with a mask.
  // Throws std::invalid_argument for 0 or above kMaxReorderWindow.
  explicit StreamTracker(std::size_t reorder_window = kDefaultReorderWindow);

  // errored marks a frame whose payload did not match; a frame with bit_errors > 0 counts as errored
  // whatever the flag says.
  void on_frame(std::uint64_t seq, bool errored, std::uint64_t bit_errors);

  Counts counts() const;
  std::size_t reorder_window() const { return window_; }
  // Within a reorder window of the highest sequence number seen: a number this stream could send now.
  bool near(std::uint64_t seq) const { return any_ && seq + window_ > highest_ && seq <= highest_ + window_; }

 private:
  void note_errors(bool errored, std::uint64_t bit_errors);
  void accept_first(std::uint64_t seq);
  void advance_to(std::uint64_t seq);
  void note_too_late(std::uint64_t seq);
  void restart_epoch();
  std::uint64_t epoch_lost() const;
  void clear_ring(std::uint64_t from_seq, std::uint64_t count);
  bool test_and_set(std::uint64_t seq);

  std::size_t window_;
  std::uint64_t mask_;
  std::vector<std::uint64_t> ring_;  // bit (seq & mask_) set: seq arrived; valid for (highest_-window_, highest_]

  bool any_ = false;
  std::uint64_t highest_ = 0;
  std::uint64_t epoch_distinct_ = 0;  // distinct seqs received since the epoch began
  std::uint64_t lost_before_epoch_ = 0;

  Counts counts_;  // all but lost, which is derived
  std::uint64_t current_burst_ = 0;

  std::array<std::uint64_t, kRestartConfirmFrames> restart_seqs_{};
  std::size_t restart_run_ = 0;
};

}  // namespace tusk::dpdk
