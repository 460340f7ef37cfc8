#include "agent/dpdk/stream_tracker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace tusk::dpdk {

StreamTracker::Counts& StreamTracker::Counts::operator+=(const Counts& other) {
  received += other.received;
  lost += other.lost;
  duplicates += other.duplicates;
  reordered += other.reordered;
  too_late += other.too_late;
  errored_frames += other.errored_frames;
  bit_errors += other.bit_errors;
  error_bursts += other.error_bursts;
  longest_burst = std::max(longest_burst, other.longest_burst);
  restarts += other.restarts;
  return *this;
}

namespace {

std::size_t ring_size_for(std::size_t reorder_window) {
  if (reorder_window == 0 || reorder_window > StreamTracker::kMaxReorderWindow) {
    throw std::invalid_argument(fmt::format("reorder window {} frames is out of range 1..{}", reorder_window,
                                            StreamTracker::kMaxReorderWindow));
  }
  return std::max<std::size_t>(64, std::bit_ceil(reorder_window));
}

}  // namespace

StreamTracker::StreamTracker(std::size_t reorder_window)
    : window_(ring_size_for(reorder_window)), mask_(window_ - 1), ring_(window_ / 64, 0) {}

void StreamTracker::on_frame(std::uint64_t seq, bool errored, std::uint64_t bit_errors) {
  note_errors(errored || bit_errors > 0, bit_errors);

  if (!any_) {
    accept_first(seq);
    return;
  }
  if (seq > highest_) {
    restart_run_ = 0;
    advance_to(seq);
    ++counts_.received;
    ++epoch_distinct_;
    return;
  }
  const std::uint64_t age = highest_ - seq;
  if (age >= window_) {
    note_too_late(seq);
    return;
  }
  restart_run_ = 0;
  if (test_and_set(seq)) {
    ++counts_.duplicates;
    return;
  }
  // age > 0 here: highest_'s own bit is always set.
  ++counts_.received;
  ++epoch_distinct_;
  ++counts_.reordered;
}

StreamTracker::Counts StreamTracker::counts() const {
  Counts c = counts_;
  c.lost = lost_before_epoch_ + epoch_lost();
  return c;
}

void StreamTracker::note_errors(bool errored, std::uint64_t bit_errors) {
  counts_.bit_errors += bit_errors;
  if (!errored) {
    current_burst_ = 0;
    return;
  }
  ++counts_.errored_frames;
  if (current_burst_ == 0) ++counts_.error_bursts;
  ++current_burst_;
  counts_.longest_burst = std::max(counts_.longest_burst, current_burst_);
}

void StreamTracker::accept_first(std::uint64_t seq) {
  any_ = true;
  highest_ = seq;
  test_and_set(seq);
  epoch_distinct_ = 1;
  ++counts_.received;
}

void StreamTracker::advance_to(std::uint64_t seq) {
  // The ring slots of the seqs we skip over still hold the bits of seqs one window back.
  const std::uint64_t gap = seq - highest_;
  clear_ring(highest_ + 1, std::min<std::uint64_t>(gap, window_));
  highest_ = seq;
  test_and_set(seq);
}

void StreamTracker::note_too_late(std::uint64_t seq) {
  ++counts_.too_late;
  // A restarted sender begins again at 0, so a candidate run must start inside the first window and
  // keep rising; anything else is a stale frame and breaks the run.
  const bool continues =
      restart_run_ > 0 && seq > restart_seqs_[restart_run_ - 1] && seq - restart_seqs_[restart_run_ - 1] <= window_;
  if (continues) {
    restart_seqs_[restart_run_++] = seq;
  } else if (seq < window_) {
    restart_seqs_[0] = seq;
    restart_run_ = 1;
  } else {
    restart_run_ = 0;
    return;
  }
  if (restart_run_ == kRestartConfirmFrames) restart_epoch();
}

void StreamTracker::restart_epoch() {
  lost_before_epoch_ += epoch_lost();
  ++counts_.restarts;
  std::fill(ring_.begin(), ring_.end(), 0);
  highest_ = restart_seqs_[restart_run_ - 1];
  for (std::size_t i = 0; i < restart_run_; ++i) {
    if (highest_ - restart_seqs_[i] < window_) test_and_set(restart_seqs_[i]);
  }
  epoch_distinct_ = restart_run_;
  counts_.received += restart_run_;
  counts_.too_late -= restart_run_;
  restart_run_ = 0;
}

std::uint64_t StreamTracker::epoch_lost() const {
  // highest_ + 1 - distinct, written so that highest_ == UINT64_MAX cannot overflow.
  return any_ ? highest_ - (epoch_distinct_ - 1) : 0;
}

void StreamTracker::clear_ring(std::uint64_t from_seq, std::uint64_t count) {
  std::uint64_t pos = from_seq & mask_;
  while (count > 0) {
    const std::uint64_t bit = pos & 63;
    const std::uint64_t n = std::min<std::uint64_t>(64 - bit, count);
    const std::uint64_t bits = n == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << n) - 1) << bit;
    ring_[pos >> 6] &= ~bits;
    pos = (pos + n) & mask_;
    count -= n;
  }
}

bool StreamTracker::test_and_set(std::uint64_t seq) {
  const std::uint64_t pos = seq & mask_;
  std::uint64_t& word = ring_[pos >> 6];
  const std::uint64_t bit = std::uint64_t{1} << (pos & 63);
  const bool was_set = (word & bit) != 0;
  word |= bit;
  return was_set;
}

}  // namespace tusk::dpdk
