// The frame sizes one TX stream sends: a single size, or a profile's frame_sizes list (IMIX is
// such a list, 7 × 64, 4 × 576, 1 × 1500 B) cycled frame by frame in the order given, so every
// run of len(list) frames carries the whole mix.
//
// Sizes and their payload lengths are worked out and checked once, at set-up (the constructor
// throws); next() is a datapath call: no allocation, no branch beyond the wrap. One cycle per
// stream, owned by the TX thread: sharing one over several streams would hand each stream a
// different part of the mix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "agent/dpdk/frame_format.hpp"
#include "common/rates.hpp"

namespace tusk::dpdk {

struct FrameSize {
  std::uint16_t frame = 0;    // bytes on the wire without FCS
  std::uint16_t payload = 0;  // PRBS bytes after the headers
};

class FrameSizeCycle {
 public:
  // `sizes` empty means {single_size}. Throws std::invalid_argument naming the size that cannot
  // hold spec's headers (payload_length_for) or is above the 16-bit frame length.
  FrameSizeCycle(const FrameSpec& spec, std::uint32_t single_size, const std::vector<std::uint32_t>& sizes);

  const FrameSize& next() noexcept {
    const FrameSize& size = sizes_[position_];
    if (++position_ == sizes_.size()) position_ = 0;
    return size;
  }

  const std::vector<FrameSize>& sizes() const { return sizes_; }
  // The mean frame size over one cycle: what turns a bit rate into a frame rate for a mix.
  double mean_frame_bytes() const { return mix_.mean_bytes; }
  std::uint64_t largest_frame_bytes() const { return mix_.largest_bytes; }

 private:
  std::vector<FrameSize> sizes_;
  std::size_t position_ = 0;
  SizeMix mix_;
};

}  // namespace tusk::dpdk
