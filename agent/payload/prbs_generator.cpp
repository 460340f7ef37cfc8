// PrbsGenerator (prbs.hpp): a sender's running sequence.
#include "agent/payload/prbs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "agent/payload/prbs_kernels.hpp"

namespace tusk::payload {

namespace {

constexpr std::size_t kGeneratorBlocks = 1024;  // 16 KiB of sequence per refill: stays in L1/L2

// The stream's room for one vector past its end.
constexpr std::size_t kSlackBlocks = 4;

}  // namespace

PrbsGenerator::PrbsGenerator(Pattern pattern, bool invert, std::uint32_t state)
    : pattern_(pattern), invert_(invert), fixed_state_(state), degree_(degree(pattern)) {
  if (!is_valid_state(pattern, state)) {
    throw std::invalid_argument(fmt::format("PRBS state {:#x} is not valid for {}: it must be nonzero and below 2^{}",
                                            state, name_of(pattern), degree(pattern)));
  }
  if (degree_ == 0) return;
  blocks_.resize(1 + kGeneratorBlocks + kSlackBlocks);
  // The register is the n bits just before the sequence: big-endian in the lead block's last bytes,
  // complemented as the buffer holds the sequence as it is sent.
  auto* lead = reinterpret_cast<std::uint8_t*>(blocks_.data());
  const std::uint32_t held = invert_ ? ~state : state;
  for (int i = 0; i < 4; ++i) lead[12 + i] = static_cast<std::uint8_t>(held >> (24 - 8 * i));
  extend_ = choose_extend();
  near_tap_bytes_ = 64 * std::size_t{tap(pattern)};
  // The first taps: 64n bytes from the register, the slow way, once.
  fill_pattern(pattern_, invert_, state, stream(), 64 * std::size_t{degree_});
}

std::uint8_t* PrbsGenerator::stream() {
  return reinterpret_cast<std::uint8_t*>(blocks_.data()) + 16;
}

const std::uint8_t* PrbsGenerator::stream() const {
  return reinterpret_cast<const std::uint8_t*>(blocks_.data()) + 16;
}

void PrbsGenerator::rebase() {
  const std::size_t far = 64 * std::size_t{degree_};
  std::memmove(stream(), stream() + position_ - far, far);
  position_ = far;
}

void PrbsGenerator::fill(std::uint8_t* out, std::size_t bytes) {
  if (degree_ == 0) {
    fill_pattern(pattern_, invert_, fixed_state_, out, bytes);
    return;
  }
  const std::size_t far = 64 * std::size_t{degree_};
  while (bytes > 0) {
    if (position_ == kGeneratorBlocks * 16) rebase();
    std::size_t count = std::min(bytes, kGeneratorBlocks * 16 - position_);
    if (position_ < far) {  // the first taps, made from the register
      count = std::min(count, far - position_);
      std::memcpy(out, stream() + position_, count);
    } else {
      // Bytes made already past position_ (the last call's last vector) are made again, the same.
      extend_(stream(), position_, count, out, far, near_tap_bytes_, invert_);
    }
    out += count;
    bytes -= count;
    position_ += count;
  }
}

std::uint32_t PrbsGenerator::state() const {
  if (degree_ == 0) return fixed_state_;
  // The lead block guarantees four bytes before every position.
  const std::uint8_t* end = stream() + position_;
  const std::uint32_t last32 = std::uint32_t{end[-4]} << 24 | std::uint32_t{end[-3]} << 16 |
                               std::uint32_t{end[-2]} << 8 | std::uint32_t{end[-1]};
  return (invert_ ? ~last32 : last32) & ((std::uint32_t{1} << degree_) - 1);
}

}  // namespace tusk::payload
