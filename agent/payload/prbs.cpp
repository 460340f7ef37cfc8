#include "agent/payload/prbs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <stdexcept>

#include "agent/payload/prbs_kernels.hpp"

namespace tusk::payload {
namespace {

// All the shift distances used below are whole bytes, so words are kept in native byte order
// straight from memory: no byte swapping, and generated words compare directly with loaded data.
constexpr bool kLittleEndian = std::endian::native == std::endian::little;

// Sixteen stream bytes in memory order; GCC and Clang lower it to SSE2 or NEON.
typedef std::uint64_t Block __attribute__((vector_size(16)));

inline Block load_block(const std::uint8_t* p) {
  Block b;
  std::memcpy(&b, p, sizeof b);
  return b;
}

inline void store_block(std::uint8_t* p, Block b) {
  std::memcpy(p, &b, sizeof b);
}

inline Block make_block(std::uint64_t first, std::uint64_t second) {
  return Block{first, second};
}

inline Block invert_mask(bool invert) {
  return invert ? ~Block{} : Block{};
}

// Inline, because without -mpopcnt std::popcount is a libgcc call; only runs where bits differ.
inline unsigned popcount64(std::uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555ULL;
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<unsigned>((x * 0x0101010101010101ULL) >> 56);
}

// load_block(kFirstBytes.data() + 16 - n) keeps the first n bytes of a block.
constexpr std::array<std::uint8_t, 32> kFirstBytes = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                                      0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

inline bool is_zero(Block b) {
  return (b[0] | b[1]) == 0;
}

inline unsigned popcount(Block b) {
  return popcount64(b[0]) + popcount64(b[1]);
}

constexpr std::uint64_t byteswap64(std::uint64_t v) {
  std::uint64_t r = 0;
  for (int i = 0; i < 8; ++i, v >>= 8) r = (r << 8) | (v & 0xFF);
  return r;
}

// A word whose bit 63 is the earliest stream bit, as the native load of its MSB-first bytes.
constexpr std::uint64_t native_from_msb_first(std::uint64_t v) {
  return kLittleEndian ? byteswap64(v) : v;
}

// PRBS-n with p(x) = x^n + x^k + 1.
//
// Squaring p(x) j times over GF(2) gives x^(n*2^j) + x^(k*2^j) + 1, so the sequence also obeys
// s[i] = s[i - n*2^j] ^ s[i - k*2^j]. Two consequences are used:
//
// Start-up, from the n-bit register: with j >= 3 chosen so that k*2^j >= 128, both taps of the next
// 128 bits lie in bits already produced and are whole bytes back, so the next 16 bytes are the XOR
// of two windows of history held in registers, each put together from byte-shifted 8-byte words.
//
// Steady state: with j = 7 the taps are exactly n and k blocks of 16 bytes back, so block
// B[m] = B[m-n] ^ B[m-k]: two loads and one XOR per 16 bytes, once n blocks exist. Those live in a
// ring of R > n blocks (at most 512 bytes, on the stack), which is also what the checker compares
// against. The first n blocks come from the start-up method; both produce the same sequence.
template <unsigned N, unsigned K>
struct Prbs {
  static_assert(0 < K && K < N && N < 32);

  static constexpr std::uint32_t kMask = (std::uint32_t{1} << N) - 1;
  static constexpr unsigned kDegree = N;
  static constexpr unsigned kTap = K;

  // ---- start-up: one block per step from register-held history ----

  static constexpr unsigned kSquarings = [] {
    unsigned j = 3;
    while ((K << j) < 128) ++j;
    return j;
  }();
  static constexpr unsigned kFarTapBytes = N << (kSquarings - 3);
  static constexpr unsigned kNearTapBytes = K << (kSquarings - 3);
  static constexpr unsigned kHistoryBlocks = kFarTapBytes / 16 + 1;
  static constexpr unsigned kHistoryWords = 2 * kHistoryBlocks;

  // Counting back from the current position in native 8-byte words h[0] (the 8 bytes just before
  // it), h[1], ...: h[0]'s last n bits in stream order are the register. Block i holds
  // {h[2i+1], h[2i]}, in memory order.
  using History = std::array<Block, kHistoryBlocks>;

  // {h[q], h[q-1]}: aligned with the blocks for odd q, straddling two of them for even q.
  template <unsigned Q>
  static Block word_pair(const History& hb) {
    static_assert(Q >= 1 && Q < kHistoryWords);
    if constexpr (Q % 2 == 1) {
      return hb[Q / 2];
    } else {
      return Block{hb[Q / 2][1], hb[Q / 2 - 1][0]};
    }
  }

  // The 16 bytes that start D bytes before the current position: each lane is the 8 bytes that
  // straddle two history words, so both lanes shift by the same counts.
  template <unsigned D>
  static Block window(const History& hb) {
    constexpr unsigned q = D / 8;
    constexpr unsigned r = D % 8;
    static_assert(q >= 2);
    if constexpr (r == 0) {
      return word_pair<q - 1>(hb);
    } else if constexpr (kLittleEndian) {
      return (word_pair<q>(hb) >> (8 * (8 - r))) | (word_pair<q - 1>(hb) << (8 * r));
    } else {
      return (word_pair<q>(hb) << (8 * (8 - r))) | (word_pair<q - 1>(hb) >> (8 * r));
    }
  }

  // The next 16 bytes, and the history moved past them. (Two blocks per step from deeper taps, to
  // break the dependency on the previous block, measured no faster and slowed short calls.)
  static Block step(History& hb) {
    const Block b = window<kFarTapBytes>(hb) ^ window<kNearTapBytes>(hb);
    for (std::size_t i = kHistoryBlocks - 1; i > 0; --i) hb[i] = hb[i - 1];
    hb[0] = b;
    return b;
  }

  // The history is linear in the register, so it is the XOR of one precomputed history per nibble
  // of the register: a few table loads per call instead of hundreds of serial steps.
  struct BackTable {
    alignas(16) std::array<std::array<std::array<std::uint64_t, kHistoryWords>, 16>, (N + 3) / 4> by_nibble{};
  };

  static constexpr BackTable make_back_table() {
    // Bit-level history of each one-bit register (bit j = s[t-1-j]), extended backwards with
    // s[u] = s[u+n] ^ s[u+n-k]; word i, read MSB-first, is stream bits t-64(i+1) .. t-64i-1.
    std::array<std::array<std::uint64_t, kHistoryWords>, N> unit{};
    for (unsigned b = 0; b < N; ++b) {
      auto bit = [&](unsigned j) { return (unit[b][j / 64] >> (j % 64)) & 1; };
      for (unsigned j = 0; j < 64 * kHistoryWords; ++j) {
        const std::uint64_t v = j < N ? std::uint64_t{j == b} : bit(j - N) ^ bit(j - N + K);
        unit[b][j / 64] |= v << (j % 64);
      }
    }
    BackTable t;
    for (unsigned g = 0; g < t.by_nibble.size(); ++g) {
      for (unsigned v = 0; v < 16; ++v) {
        for (unsigned i = 0; i < 4; ++i) {
          const unsigned b = 4 * g + i;
          if (b >= N || ((v >> i) & 1) == 0) continue;
          for (unsigned w = 0; w < kHistoryWords; ++w) t.by_nibble[g][v][w] ^= unit[b][w];
        }
        // Native words, and within each block the earlier word first, so a block loads directly.
        auto& e = t.by_nibble[g][v];
        for (unsigned w = 0; w < kHistoryWords; w += 2) {
          const std::uint64_t later = e[w];
          e[w] = native_from_msb_first(e[w + 1]);
          e[w + 1] = native_from_msb_first(later);
        }
      }
    }
    return t;
  }

  static constexpr BackTable kBackTable = make_back_table();

  static History history_from(std::uint32_t state) {
    History hb{};
    for (unsigned g = 0; g < kBackTable.by_nibble.size(); ++g) {
      const auto& words = kBackTable.by_nibble[g][(state >> (4 * g)) & 15];
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(words.data());
      for (unsigned i = 0; i < kHistoryBlocks; ++i) hb[i] ^= load_block(bytes + 16 * i);
    }
    return hb;
  }

  // ---- clean-data check: the data against itself ----
  //
  // With j = 3 the taps are n and k bytes back: every byte of the sequence is the XOR of the bytes n
  // and k before it (inverted data: of those, complemented). So data whose first n bytes are the
  // sequence and whose later bytes all obey that relation is the sequence, by induction. On a clean
  // link that proves a frame error-free from the data alone, three loads per vector and no start-up
  // beyond the first 32 bytes: generating the sequence cost a third of a 1500-byte frame's check
  // just to start. Data that breaks the relation is counted exactly against the generated sequence.

  // Compared against the generated sequence: at least n bytes, for the induction to start.
  static constexpr std::size_t kHeadBytes = 32;
  // Shorter calls are counted against the table's first bytes of the sequence outright.
  static constexpr std::size_t kMinSelfCheckBytes = kHeadBytes + kRelationMinBytes;
  static constexpr std::size_t kTableBytes = kMinSelfCheckBytes;
  // How many leading bytes of `data` are proven to be the sequence from `state`: 0, at least
  // kHeadBytes, or `bytes`.
  static std::size_t proven_prefix(std::uint32_t state, bool invert, const std::uint8_t* data, std::size_t bytes) {
    static_assert(kHeadBytes >= N && kMinSelfCheckBytes >= kHeadBytes + kRelationMinBytes);
    if (bytes < kMinSelfCheckBytes) return 0;
    Block head0 = load_block(data) ^ invert_mask(invert);
    Block head1 = load_block(data + 16) ^ invert_mask(invert);
    for (unsigned g = 0; g < kHeadTable.size(); ++g) {
      const std::uint8_t* expected = kHeadTable[g][(state >> (4 * g)) & 15].data();
      head0 ^= load_block(expected);
      head1 ^= load_block(expected + 16);
    }
    if (!is_zero(head0 | head1)) return 0;
    return relation_holds_to(data, kHeadBytes, bytes, N, K, invert);
  }

  // The bit errors of data shorter than kTableBytes (a small frame's payload), against the
  // sequence from the table: no start-up.
  static std::uint64_t short_errors(std::uint32_t state, bool invert, const std::uint8_t* data, std::size_t bytes) {
    std::array<Block, kTableBytes / 16> expected{};
    for (unsigned g = 0; g < kHeadTable.size(); ++g) {
      const std::uint8_t* row = kHeadTable[g][(state >> (4 * g)) & 15].data();
      for (std::size_t b = 0; b < expected.size(); ++b) expected[b] ^= load_block(row + 16 * b);
    }
    const Block flip = invert_mask(invert);
    std::array<Block, kTableBytes / 16> differ{};
    const std::size_t whole = bytes / 16;
    Block any{};
    for (std::size_t b = 0; b < whole; ++b) any |= differ[b] = load_block(data + 16 * b) ^ flip ^ expected[b];
    if (const std::size_t rest = bytes % 16; rest != 0) {
      // Reading all 16 bytes could run off the end of the caller's buffer, so copy what is there.
      std::array<std::uint8_t, 16> got{};
      std::memcpy(got.data(), data + 16 * whole, rest);
      any |= differ[whole] =
          (load_block(got.data()) ^ flip ^ expected[whole]) & load_block(kFirstBytes.data() + 16 - rest);
    }
    if (is_zero(any)) return 0;
    std::uint64_t errors = 0;
    for (const Block& d : differ) errors += popcount(d);
    return errors;
  }

  // The first kTableBytes of the sequence are linear in the register, so they are the XOR of one
  // precomputed row per nibble of it: a frame's check starts with a few table loads, and a short
  // payload is checked against them outright.
  using Head = std::array<std::uint8_t, kTableBytes>;
  static constexpr auto make_head_table() {
    std::array<Head, N> unit{};  // the head from each one-bit register
    for (unsigned b = 0; b < N; ++b) {
      std::uint32_t reg = std::uint32_t{1} << b;
      for (unsigned i = 0; i < 8 * kTableBytes; ++i) {
        const std::uint32_t bit = ((reg >> (N - 1)) ^ (reg >> (K - 1))) & 1;
        reg = ((reg << 1) | bit) & kMask;
        unit[b][i / 8] = static_cast<std::uint8_t>(unit[b][i / 8] | bit << (7 - i % 8));
      }
    }
    // Each row from a row with one bit fewer, so the table stays within a compiler's constant-
    // evaluation budget (Clang's step limit).
    std::array<std::array<Head, 16>, (N + 3) / 4> by_nibble{};
    for (unsigned g = 0; g < by_nibble.size(); ++g) {
      for (unsigned v = 1; v < 16; ++v) {
        const unsigned b = 4 * g + static_cast<unsigned>(std::countr_zero(v));
        const Head& fewer = by_nibble[g][v & (v - 1)];
        Head& row = by_nibble[g][v];
        for (unsigned byte = 0; byte < kTableBytes; ++byte) {
          row[byte] = static_cast<std::uint8_t>(fewer[byte] ^ (b < N ? unit[b][byte] : 0));
        }
      }
    }
    return by_nibble;
  }
  alignas(16) static constexpr auto kHeadTable = make_head_table();

  // The register before `end`: the n bits there, un-inverted.
  static std::uint32_t register_before(const std::uint8_t* end, bool invert) {
    const std::uint32_t last32 = std::uint32_t{end[-4]} << 24 | std::uint32_t{end[-3]} << 16 |
                                 std::uint32_t{end[-2]} << 8 | std::uint32_t{end[-1]};
    return (invert ? ~last32 : last32) & kMask;
  }

  // ---- steady state: 16-byte blocks from a ring ----

  static constexpr std::size_t kRing = std::bit_ceil(std::size_t{N} + 1);
  using Ring = std::array<Block, kRing>;

  // Block m from blocks m-n and m-k, m >= n; slots are constants when m is.
  static void next_block(Ring& ring, std::size_t m) {
    ring[m % kRing] = ring[(m + kRing - N) % kRing] ^ ring[(m + kRing - K) % kRing];
  }

  // Feeds `bytes` bytes of the non-inverted sequence that starts at `state` to the sink and returns
  // the register after them. Blocks are made a ring-slice at a time and handed over as a span, so
  // that the checker can OR a whole slice together before it looks at the result.
  template <class Sink>
  static std::uint32_t run(std::uint32_t state, std::size_t bytes, Sink& result) {
    if (bytes == 0) return state & kMask;
    // A local copy whose address never escapes: stores through the output pointer could otherwise
    // alias the sink's own fields and force a reload of the pointer after every store.
    Sink sink = result;
    const std::size_t whole = bytes / 16;
    const std::size_t rest = bytes % 16;
    const std::size_t blocks = whole + (rest != 0 ? 1 : 0);

    Ring ring;
    History h = history_from(state);
    // Block -1 (slot kRing-1, never a tap) keeps the final register at hand for short calls.
    ring[kRing - 1] = h[0];
    std::size_t made = std::min<std::size_t>(blocks, N);
    for (std::size_t m = 0; m < made; ++m) ring[m] = step(h);
    std::size_t done = std::min(made, whole);
    sink.span(ring.data(), done);

    while (made < blocks) {
      const std::size_t slot = made % kRing;
      const std::size_t count = std::min(kRing - slot, blocks - made);
      if (count == kRing) {
        // A whole turn of the ring: constant slots, so the compiler can keep it in registers.
#pragma GCC unroll 32
        for (std::size_t i = 0; i < kRing; ++i) next_block(ring, i);
      } else {
        for (std::size_t m = made; m < made + count; ++m) next_block(ring, m);
      }
      made += count;
      const std::size_t now_done = std::min(made, whole);
      if constexpr (Sink::kUnrolledTurns) {
        if (now_done - done == kRing) {
          sink.template span<kRing>(ring.data());
          done = now_done;
          continue;
        }
      }
      sink.span(ring.data() + slot, now_done - done);
      done = now_done;
    }
    if (rest != 0) sink.part(ring[(blocks - 1) % kRing], rest);
    result = sink;

    // The register is the last n bits, all within the last two blocks.
    std::array<std::uint8_t, 32> tail;
    store_block(tail.data(), ring[(blocks - 2 + kRing) % kRing]);
    store_block(tail.data() + 16, ring[(blocks - 1) % kRing]);
    const std::uint8_t* end = tail.data() + 16 + (rest != 0 ? rest : 16);
    const std::uint32_t last32 = std::uint32_t{end[-4]} << 24 | std::uint32_t{end[-3]} << 16 |
                                 std::uint32_t{end[-2]} << 8 | std::uint32_t{end[-1]};
    return last32 & kMask;
  }
};

struct Writer {
  std::uint8_t* out;
  Block invert;

  void span(const Block* blocks, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) store_block(out + 16 * i, blocks[i] ^ invert);
    out += 16 * count;
  }
  // Measured: storing from a separate loop beats fusing it into the unrolled generation.
  static constexpr bool kUnrolledTurns = false;
  void part(Block b, std::size_t bytes) {
    std::array<std::uint8_t, 16> tmp;
    store_block(tmp.data(), b ^ invert);
    std::memcpy(out, tmp.data(), bytes);
    out += bytes;
  }
};

struct Checker {
  const std::uint8_t* data;
  Block invert;
  std::uint64_t errors = 0;

  // A clean link is the common case: a span is only ORed together, and counted again, from the
  // blocks still at hand, when something differed.
  void span(const Block* blocks, std::size_t count) {
    Block any{};
    for (std::size_t i = 0; i < count; ++i) any |= load_block(data + 16 * i) ^ invert ^ blocks[i];
    recount_if(any, blocks, count);
  }
  // Measured: fused into the unrolled generation, the comparison runs from registers.
  static constexpr bool kUnrolledTurns = true;
  template <std::size_t Count>
  void span(const Block* blocks) {
    Block any{};
#pragma GCC unroll 32
    for (std::size_t i = 0; i < Count; ++i) any |= load_block(data + 16 * i) ^ invert ^ blocks[i];
    recount_if(any, blocks, Count);
  }
  void recount_if(Block any, const Block* blocks, std::size_t count) {
    if (!is_zero(any)) [[unlikely]] {
      for (std::size_t i = 0; i < count; ++i) errors += popcount(load_block(data + 16 * i) ^ invert ^ blocks[i]);
    }
    data += 16 * count;
  }
  void part(Block b, std::size_t bytes) {
    // Reading all 16 bytes could run off the end of the caller's buffer, so copy what is there.
    std::array<std::uint8_t, 16> got{};
    for (std::size_t i = 0; i < bytes; ++i) got[i] = data[i];
    errors += popcount((load_block(got.data()) ^ invert ^ b) & load_block(kFirstBytes.data() + 16 - bytes));
    data += bytes;
  }
};

// Errors beyond a miss of the relation are counted against the generated sequence this many bytes
// at a time, then the data is tried against itself again: one error costs a start-up and no more
// than this much slow checking, even in a jumbo frame or a bulk buffer.
constexpr std::size_t kGeneratedCheckBytes = 1024;

template <class Prbs>
std::uint64_t count_prbs_errors(bool invert, std::uint32_t state, const std::uint8_t* data, std::size_t bytes) {
  const Block invert_block = invert_mask(invert);
  std::uint64_t errors = 0;
  while (bytes > 0) {
    if (bytes < Prbs::kTableBytes) return errors + Prbs::short_errors(state, invert, data, bytes);
    const std::size_t proven = Prbs::proven_prefix(state, invert, data, bytes);
    if (proven == bytes) break;  // a clean frame, the common case
    if (proven > 0) {
      data += proven;
      bytes -= proven;
      state = Prbs::register_before(data, invert);
    }
    const std::size_t chunk = std::min(bytes, kGeneratedCheckBytes);
    Checker checker{data, invert_block};
    state = Prbs::run(state, chunk, checker);
    errors += checker.errors;
    data += chunk;
    bytes -= chunk;
  }
  return errors;
}

template <class Fn>
auto with_prbs(Pattern pattern, Fn&& fn) {
  switch (pattern) {
    case Pattern::Prbs7:
      return fn(Prbs<7, 6>{});
    case Pattern::Prbs9:
      return fn(Prbs<9, 5>{});
    case Pattern::Prbs11:
      return fn(Prbs<11, 9>{});
    case Pattern::Prbs15:
      return fn(Prbs<15, 14>{});
    case Pattern::Prbs23:
      return fn(Prbs<23, 18>{});
    case Pattern::Prbs31:
      break;
    case Pattern::Zeros:
    case Pattern::Ones:
    case Pattern::Alternating:
      // Callers handle the fixed patterns first; any PRBS type keeps the return type.
      break;
  }
  return fn(Prbs<31, 28>{});
}

std::uint8_t fixed_byte(Pattern pattern) {
  switch (pattern) {
    case Pattern::Ones:
      return 0xFF;
    case Pattern::Alternating:
      return 0x55;
    default:
      return 0x00;
  }
}

bool is_fixed(Pattern pattern) {
  return pattern == Pattern::Zeros || pattern == Pattern::Ones || pattern == Pattern::Alternating;
}

std::uint64_t count_fixed_errors(std::uint8_t byte, const std::uint8_t* data, std::size_t bytes) {
  const std::uint64_t word = 0x0101010101010101ULL * byte;
  std::array<Block, 32> expected;
  expected.fill(make_block(word, word));
  Checker checker{data, Block{}};
  for (std::size_t left = bytes / 16; left != 0;) {
    const std::size_t count = std::min(left, expected.size());
    checker.span(expected.data(), count);
    left -= count;
  }
  if (bytes % 16 != 0) checker.part(expected[0], bytes % 16);
  return checker.errors;
}

}  // namespace

std::uint32_t fill_pattern(Pattern pattern, bool invert, std::uint32_t state, std::uint8_t* out, std::size_t bytes) {
  if (is_fixed(pattern)) {
    const auto byte = static_cast<std::uint8_t>(fixed_byte(pattern) ^ (invert ? 0xFF : 0x00));
    if (bytes != 0) std::memset(out, byte, bytes);
    return state;
  }
  Writer writer{out, invert_mask(invert)};
  return with_prbs(pattern, [&](auto prbs) { return decltype(prbs)::run(state, bytes, writer); });
}

std::uint64_t count_bit_errors(Pattern pattern, bool invert, std::uint32_t state, const std::uint8_t* data,
                               std::size_t bytes) {
  if (is_fixed(pattern)) {
    const auto byte = static_cast<std::uint8_t>(fixed_byte(pattern) ^ (invert ? 0xFF : 0x00));
    return count_fixed_errors(byte, data, bytes);
  }
  return with_prbs(pattern, [&](auto prbs) { return count_prbs_errors<decltype(prbs)>(invert, state, data, bytes); });
}

}  // namespace tusk::payload
