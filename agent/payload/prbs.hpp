// PRBS and fixed payload patterns for bit-error-rate tests: the sender fills each payload and the
// receiver counts every bit that differs, word-parallel, fast enough to keep up with the link.
// Bit order: the bit stream is packed MSB-first, the first bit of the sequence in bit 7 of byte 0,
// as a BER tester on the serial link counts it.
//
// State: for PRBS-n (ITU-T O.150, x^n + x^k + 1) the n-bit LFSR register, which is also the last n
// bits of the non-inverted sequence, oldest in bit n-1 and newest in bit 0, so that the next bit is
// bit(n-1) ^ bit(k-1). A receiver can therefore also take it from n received bits. Inversion (O.150
// sends PRBS-15/23/31 inverted) comes after the register and leaves the state alone. A zero register
// would emit zeros forever, so PRBS states must be nonzero. The fixed patterns have no register:
// their state passes through unchanged.
//
// No allocation (except a PrbsGenerator's buffer, once, when it is made); any thread. fill_pattern,
// count_bit_errors and advance_state are datapath calls and never throw: they use the state masked
// to n bits, as is.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tusk::payload {

enum class Pattern {
  Prbs7,   // x^7 + x^6 + 1
  Prbs9,   // x^9 + x^5 + 1
  Prbs11,  // x^11 + x^9 + 1
  Prbs15,  // x^15 + x^14 + 1
  Prbs23,  // x^23 + x^18 + 1
  Prbs31,  // x^31 + x^28 + 1
  Zeros,
  Ones,
  Alternating,  // 0x55: 0101...
};

// Names as profiles spell them: "prbs7" ... "prbs31", "zeros", "ones", "alternating". Exact match.
std::optional<Pattern> pattern_from_name(std::string_view name);
std::string_view name_of(Pattern pattern);

// n for PRBS-n, 0 for the fixed patterns.
unsigned degree(Pattern pattern);
// k of its polynomial x^n + x^k + 1, 0 for the fixed patterns.
unsigned tap(Pattern pattern);
// Nonzero and below 2^n for PRBS; anything for the fixed patterns.
bool is_valid_state(Pattern pattern, std::uint32_t state);
// The all-ones register, the usual O.150 start; 0 for the fixed patterns.
std::uint32_t default_state(Pattern pattern);

// Writes `bytes` bytes of the sequence that starts at `state` (the register before the first bit)
// and returns the register at the bit after the last one written.
std::uint32_t fill_pattern(Pattern pattern, bool invert, std::uint32_t state, std::uint8_t* out, std::size_t bytes);

// Compares `data` against the sequence that starts at `state`; returns the number of bit errors.
// Any alignment and length; no allocation.
std::uint64_t count_bit_errors(Pattern pattern, bool invert, std::uint32_t state, const std::uint8_t* data,
                               std::size_t bytes);

// The register `bits` bits later, in O(n^2) word operations whatever `bits` is, so a checker that
// lost frames can find its place from the sequence number instead of generating the gap.
std::uint32_t advance_state(Pattern pattern, std::uint32_t state, std::uint64_t bits);

// For tests: fill and check with vectors no wider than `bytes` (16, 32 or 64; 0 lifts the limit),
// so every path this CPU has is held to the same answers. Not for the datapath.
void limit_vector_bytes_for_tests(unsigned bytes);

// A sender's running sequence: each fill continues where the previous one stopped, and state()
// is what to put in the next frame's header so that its checker can start there.
//
// Why a buffer: starting the sequence from a register costs about as much as making 1500 bytes of
// it, so a sender that restarted it for every frame spent half its PRBS time on start-ups. This one
// keeps the last 16 KiB of the sequence as sent; each fill makes its bytes from the bytes 64n and
// 64k before them in that buffer, storing each vector both into the frame and into the buffer, so a
// frame costs about what copying it from a template would.
class PrbsGenerator {
 public:
  // Throws std::invalid_argument when !is_valid_state(pattern, state).
  PrbsGenerator(Pattern pattern, bool invert, std::uint32_t state);

  void fill(std::uint8_t* out, std::size_t bytes);
  // The register at the next bit to be generated.
  std::uint32_t state() const;
  Pattern pattern() const { return pattern_; }
  bool inverted() const { return invert_; }

 private:
  // Moves the last 64n bytes to the buffer's start, where the next bytes are made from them.
  void rebase();
  std::uint8_t* stream();
  const std::uint8_t* stream() const;

  Pattern pattern_;
  bool invert_;
  std::uint32_t fixed_state_;  // the fixed patterns' pass-through state
  unsigned degree_;
  std::size_t near_tap_bytes_ = 0;  // 64k: the nearer tap of the fill's recurrence
 public:
  // Makes stream bytes [from, from + bytes) into the stream and `out` (prbs.cpp).
  using Extend = void (*)(std::uint8_t* stream, std::size_t from, std::size_t bytes, std::uint8_t* out, std::size_t far,
                          std::size_t near, bool invert);

 private:
  Extend extend_ = nullptr;
  // One 16-byte lead block holding the register before the sequence, then the sequence itself
  // (non-inverted); 16-byte elements keep it aligned.
  std::vector<std::array<std::uint64_t, 2>> blocks_;
  std::size_t position_ = 0;  // next stream byte, counted from the end of the lead block
};
}  // namespace tusk::payload
