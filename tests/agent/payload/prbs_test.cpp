#include "agent/payload/prbs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tusk::payload {
namespace {

struct Taps {
  Pattern pattern;
  unsigned n;
  unsigned k;
};

constexpr Taps kPrbs[] = {
    {Pattern::Prbs7, 7, 6},    {Pattern::Prbs9, 9, 5},    {Pattern::Prbs11, 11, 9},
    {Pattern::Prbs15, 15, 14}, {Pattern::Prbs23, 23, 18}, {Pattern::Prbs31, 31, 28},
};

// The textbook Fibonacci LFSR, one bit per call, written independently of the word-parallel code.
class ReferenceLfsr {
 public:
  ReferenceLfsr(unsigned n, unsigned k, std::uint32_t reg) : n_(n), k_(k), reg_(reg) {}

  unsigned next() {
    const unsigned bit = ((reg_ >> (n_ - 1)) ^ (reg_ >> (k_ - 1))) & 1;
    reg_ = ((reg_ << 1) | bit) & ((std::uint32_t{1} << n_) - 1);
    return bit;
  }

  // MSB-first: the first bit goes to bit 7 of byte 0.
  std::vector<std::uint8_t> bytes(std::size_t count, bool invert = false) {
    std::vector<std::uint8_t> out(count);
    for (auto& byte : out) {
      for (int i = 7; i >= 0; --i) byte = static_cast<std::uint8_t>(byte | (next() << i));
      if (invert) byte = static_cast<std::uint8_t>(~byte);
    }
    return out;
  }

  std::uint32_t reg() const { return reg_; }

 private:
  unsigned n_;
  unsigned k_;
  std::uint32_t reg_;
};

unsigned bit_at(const std::vector<std::uint8_t>& buf, std::size_t i) {
  return (buf[i / 8] >> (7 - i % 8)) & 1;
}

std::vector<std::uint8_t> generate(Pattern pattern, bool invert, std::uint32_t state, std::size_t bytes) {
  std::vector<std::uint8_t> out(bytes);
  PrbsGenerator gen(pattern, invert, state);
  gen.fill(out.data(), out.size());
  return out;
}

std::string label(const Taps& t) {
  return std::string(name_of(t.pattern));
}

// Generates two periods and checks that the sequence repeats after 2^n - 1 bits and after no
// proper divisor of it (checking P/f for each prime factor f is enough), and that one period holds
// 2^(n-1) ones, as every maximal-length sequence does.
void expect_period(Pattern pattern, unsigned n, const std::vector<std::uint64_t>& prime_factors) {
  const std::uint64_t period = (std::uint64_t{1} << n) - 1;
  const auto buf = generate(pattern, false, default_state(pattern), (2 * period + 7) / 8);
  std::uint64_t mismatches = 0;
  std::uint64_t ones = 0;
  for (std::uint64_t i = 0; i < period; ++i) {
    mismatches += bit_at(buf, i) ^ bit_at(buf, i + period);
    ones += bit_at(buf, i);
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(ones, std::uint64_t{1} << (n - 1));
  for (std::uint64_t f : prime_factors) {
    ASSERT_EQ(period % f, 0u);
    const std::uint64_t shorter = period / f;
    bool differs = false;
    for (std::uint64_t i = 0; i < period && !differs; ++i) differs = bit_at(buf, i) != bit_at(buf, i + shorter);
    EXPECT_TRUE(differs) << "repeats after " << shorter << " bits";
  }
  // Filling `period` bytes is 8 periods of bits, which must bring the register back.
  PrbsGenerator gen(pattern, false, default_state(pattern));
  std::vector<std::uint8_t> scratch(period);
  gen.fill(scratch.data(), scratch.size());
  EXPECT_EQ(gen.state(), default_state(pattern));
}

TEST(Prbs, NamesRoundTrip) {
  for (std::string_view name :
       {"prbs7", "prbs9", "prbs11", "prbs15", "prbs23", "prbs31", "zeros", "ones", "alternating"}) {
    const auto pattern = pattern_from_name(name);
    ASSERT_TRUE(pattern.has_value()) << name;
    EXPECT_EQ(name_of(*pattern), name);
  }
  for (std::string_view name : {"", "prbs-31", "PRBS31", "prbs32", "prbs31 ", "one"}) {
    EXPECT_FALSE(pattern_from_name(name).has_value()) << name;
  }
  for (const Taps& t : kPrbs) EXPECT_EQ(degree(t.pattern), t.n);
  EXPECT_EQ(degree(Pattern::Alternating), 0u);
}

TEST(Prbs, Prbs7PeriodIs127Bits) {
  expect_period(Pattern::Prbs7, 7, {127});
}
TEST(Prbs, Prbs9PeriodIs511Bits) {
  expect_period(Pattern::Prbs9, 9, {7, 73});
}
TEST(Prbs, Prbs11PeriodIs2047Bits) {
  expect_period(Pattern::Prbs11, 11, {23, 89});
}
TEST(Prbs, Prbs15PeriodIs32767Bits) {
  expect_period(Pattern::Prbs15, 15, {7, 31, 151});
}
TEST(Prbs, Prbs23PeriodIs8388607Bits) {
  expect_period(Pattern::Prbs23, 23, {47, 178481});
}

// 2^31 - 1 is prime, so the period is 2^31 - 1 as soon as the register comes back after that many
// bits and is not a fixed point. The last step is taken by the reference, not by advance_state,
// which reduces its argument modulo the period.
TEST(Prbs, Prbs31PeriodIs2147483647Bits) {
  const std::uint32_t start = default_state(Pattern::Prbs31);
  ReferenceLfsr ref(31, 28, advance_state(Pattern::Prbs31, start, (std::uint64_t{1} << 31) - 2));
  ref.next();
  EXPECT_EQ(ref.reg(), start);
  EXPECT_NE(advance_state(Pattern::Prbs31, start, 1), start);
}

// Fixes the direction of the recurrence (x^n + x^k + 1, not its reciprocal) against sequences
// published by an independent O.150 implementation (libosmocore's PRBS test vectors). The state
// is the first n bits, since the register is the last n bits of the sequence.
TEST(Prbs, MatchesPublishedO150Sequences) {
  struct Known {
    Pattern pattern;
    std::string_view bits;
  };
  const Known known[] = {
      {Pattern::Prbs7, "1000001100001010001111001000101100111010100111110100001110001001001101101011011110110001"},
      {Pattern::Prbs9, "1000010001100001001110010101011000011011110100110111001000101000010101101001111110110010"},
      {Pattern::Prbs11, "1000000001010000001000100001010101001000000011010000011100100011011101011101010001010000"},
      {Pattern::Prbs15, "1000000000000011000000000000101000000000001111000000000010001000000000110011000000001010"},
  };
  for (const Known& k : known) {
    const unsigned n = degree(k.pattern);
    const std::uint32_t state = static_cast<std::uint32_t>(std::stoul(std::string(k.bits.substr(0, n)), nullptr, 2));
    const std::string_view rest = k.bits.substr(n);
    const auto buf = generate(k.pattern, false, state, (rest.size() + 7) / 8);
    std::string got;
    for (std::size_t i = 0; i < rest.size(); ++i) got += bit_at(buf, i) != 0 ? '1' : '0';
    EXPECT_EQ(got, rest) << name_of(k.pattern);
  }
}

TEST(Prbs, MatchesBitSerialReference) {
  std::mt19937 rng(7);
  for (const Taps& t : kPrbs) {
    const std::uint32_t mask = (std::uint32_t{1} << t.n) - 1;
    for (std::uint32_t seed :
         {mask, std::uint32_t{1}, std::uint32_t{1} << (t.n - 1), static_cast<std::uint32_t>((rng() & mask) | 1)}) {
      ReferenceLfsr ref(t.n, t.k, seed);
      const auto expected = ref.bytes(10240);
      PrbsGenerator gen(t.pattern, false, seed);
      std::vector<std::uint8_t> got(expected.size());
      gen.fill(got.data(), got.size());
      EXPECT_EQ(got, expected) << label(t) << " seed " << seed;
      EXPECT_EQ(gen.state(), ref.reg()) << label(t) << " seed " << seed;
    }
  }
}

// The fill and the check run with the widest vectors the CPU has; each narrower path, the one
// another CPU takes, must give the same answers.
template <class Body>
void at_every_vector_width(Body body) {
  for (unsigned width : {16u, 32u, 64u}) {
    SCOPED_TRACE(::testing::Message() << "vectors of at most " << width << " bytes");
    limit_vector_bytes_for_tests(width);
    body();
    limit_vector_bytes_for_tests(0);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(Prbs, OddFillSizesContinueTheSequence) {
  at_every_vector_width([] {
    std::mt19937 rng(11);
    for (const Taps& t : kPrbs) {
      for (bool invert : {false, true}) {
        const std::uint32_t seed = default_state(t.pattern) ^ 0x5;
        ReferenceLfsr ref(t.n, t.k, seed);
        // 40,000 bytes: more than twice the generator's 16 KiB buffer, so its refills are crossed too.
        const auto expected = ref.bytes(40000, invert);
        // Every size from 0 to 200 covers each remainder modulo the 8- to 64-byte steps, with the
        // start anywhere in a cache line, and the runs of two and three vectors where the fill
        // first aligns its stores; then random sizes up to a frame and beyond.
        std::vector<std::size_t> sizes;
        for (std::size_t s = 0; s <= 200; ++s) sizes.push_back(s);
        std::size_t total = 200 * 201 / 2;
        while (total < expected.size()) {
          const std::size_t s = std::min<std::size_t>(rng() % 1600, expected.size() - total);
          sizes.push_back(s);
          total += s;
        }
        PrbsGenerator gen(t.pattern, invert, seed);
        std::vector<std::uint8_t> got(expected.size());
        std::size_t at = 0;
        for (std::size_t s : sizes) {
          gen.fill(got.data() + at, s);
          at += s;
          ASSERT_EQ(gen.state(), advance_state(t.pattern, seed, 8 * at)) << label(t) << " after " << at << " bytes";
        }
        EXPECT_EQ(got, expected) << label(t) << (invert ? " inverted" : "");
        EXPECT_EQ(gen.state(), ref.reg()) << label(t);
      }
    }
  });
}

TEST(Prbs, InvertedIsTheComplementWithTheSameState) {
  for (const Taps& t : kPrbs) {
    PrbsGenerator plain(t.pattern, false, default_state(t.pattern));
    PrbsGenerator inverted(t.pattern, true, default_state(t.pattern));
    std::vector<std::uint8_t> a(1001);
    std::vector<std::uint8_t> b(1001);
    plain.fill(a.data(), a.size());
    inverted.fill(b.data(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i] ^ b[i], 0xFF) << label(t) << " byte " << i;
    EXPECT_EQ(plain.state(), inverted.state());
  }
}

TEST(Prbs, FixedPatterns) {
  struct Fixed {
    Pattern pattern;
    std::uint8_t plain;
    std::uint8_t inverted;
  };
  for (const Fixed& f :
       {Fixed{Pattern::Zeros, 0x00, 0xFF}, Fixed{Pattern::Ones, 0xFF, 0x00}, Fixed{Pattern::Alternating, 0x55, 0xAA}}) {
    for (bool invert : {false, true}) {
      const std::uint8_t byte = invert ? f.inverted : f.plain;
      PrbsGenerator gen(f.pattern, invert, 1234);
      std::vector<std::uint8_t> buf(333, 0x3C);
      gen.fill(buf.data(), 100);
      gen.fill(buf.data() + 100, 233);
      EXPECT_EQ(buf, std::vector<std::uint8_t>(333, byte)) << name_of(f.pattern);
      EXPECT_EQ(gen.state(), 1234u) << "the state passes through a fixed pattern unchanged";
      EXPECT_EQ(count_bit_errors(f.pattern, invert, 0, buf.data(), buf.size()), 0u);
      EXPECT_EQ(count_bit_errors(f.pattern, !invert, 0, buf.data(), buf.size()), 8u * buf.size());
      buf[200] ^= 0x11;
      EXPECT_EQ(count_bit_errors(f.pattern, invert, 0, buf.data() + 1, buf.size() - 1), 2u);
      EXPECT_EQ(advance_state(f.pattern, 1234, 99), 1234u);
    }
  }
}

TEST(Prbs, StateResumesTheSequence) {
  for (const Taps& t : kPrbs) {
    for (std::size_t first : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{16}, std::size_t{1499}}) {
      PrbsGenerator sender(t.pattern, true, default_state(t.pattern));
      std::vector<std::uint8_t> head(first);
      sender.fill(head.data(), head.size());
      PrbsGenerator resumed(t.pattern, true, sender.state());
      std::vector<std::uint8_t> a(777);
      std::vector<std::uint8_t> b(777);
      sender.fill(a.data(), a.size());
      resumed.fill(b.data(), b.size());
      EXPECT_EQ(a, b) << label(t) << " after " << first << " bytes";
      EXPECT_EQ(sender.state(), resumed.state());
    }
  }
}

// What lets a receiver synchronise without a header: the register is the previous n bits,
// oldest first, of the non-inverted sequence.
TEST(Prbs, StateIsTheLastNBitsOfTheSequence) {
  for (const Taps& t : kPrbs) {
    for (std::size_t bytes : {4, 5, 9, 100, 1501}) {
      PrbsGenerator gen(t.pattern, false, default_state(t.pattern));
      std::vector<std::uint8_t> buf(bytes);
      gen.fill(buf.data(), buf.size());
      std::uint32_t last = 0;
      for (std::size_t i = bytes * 8 - t.n; i < bytes * 8; ++i) last = (last << 1) | bit_at(buf, i);
      EXPECT_EQ(gen.state(), last) << label(t) << " " << bytes << " bytes";
    }
  }
}

TEST(Prbs, AdvanceStateEqualsGeneratingThatManyBits) {
  std::mt19937 rng(3);
  for (const Taps& t : kPrbs) {
    const std::uint32_t mask = (std::uint32_t{1} << t.n) - 1;
    const std::uint32_t start = (rng() & mask) | 1;
    ReferenceLfsr ref(t.n, t.k, start);
    std::uint64_t done = 0;
    for (std::uint64_t bits : {0, 1, 2, 7, 8, 31, 63, 64, 65, 127, 128, 1000, 4099, 12345, 100000}) {
      while (done < bits) {
        ref.next();
        ++done;
      }
      EXPECT_EQ(advance_state(t.pattern, start, bits), ref.reg()) << label(t) << " +" << bits;
    }
    // Through the generator too, for whole bytes.
    PrbsGenerator gen(t.pattern, false, start);
    std::vector<std::uint8_t> buf(3001);
    gen.fill(buf.data(), buf.size());
    EXPECT_EQ(advance_state(t.pattern, start, 8 * 3001), gen.state()) << label(t);

    // Beyond the period, and composed jumps of the sizes a checker sees after a long loss.
    const std::uint64_t period = (std::uint64_t{1} << t.n) - 1;
    EXPECT_EQ(advance_state(t.pattern, start, period), start) << label(t);
    EXPECT_EQ(advance_state(t.pattern, start, 3 * period + 5), advance_state(t.pattern, start, 5));
    const std::uint64_t a = 1'000'000'000'007ULL;
    const std::uint64_t b = 3'999'999'999'989ULL;
    EXPECT_EQ(advance_state(t.pattern, advance_state(t.pattern, start, a), b), advance_state(t.pattern, start, a + b))
        << label(t);
    EXPECT_EQ(advance_state(t.pattern, start, ~std::uint64_t{0}),
              advance_state(t.pattern, start, ~std::uint64_t{0} % period));
  }
}

TEST(Prbs, CountBitErrorsIsZeroOnCleanData) {
  for (const Taps& t : kPrbs) {
    for (bool invert : {false, true}) {
      for (std::size_t bytes : {0, 1, 8, 15, 16, 17, 64, 1500, 9000}) {
        const auto buf = generate(t.pattern, invert, default_state(t.pattern), bytes);
        EXPECT_EQ(count_bit_errors(t.pattern, invert, default_state(t.pattern), buf.data(), buf.size()), 0u)
            << label(t) << " " << bytes;
      }
    }
  }
}

TEST(Prbs, CountBitErrorsCountsEachFlippedBit) {
  std::mt19937 rng(5);
  for (const Taps& t : kPrbs) {
    const std::uint32_t state = default_state(t.pattern) - 2;
    const auto clean = generate(t.pattern, false, state, 10240);
    for (std::size_t k : {1, 2, 3, 10, 100, 1000, 20000}) {
      std::set<std::size_t> positions;
      while (positions.size() < k) positions.insert(rng() % (clean.size() * 8));
      auto data = clean;
      for (std::size_t p : positions) data[p / 8] = static_cast<std::uint8_t>(data[p / 8] ^ (0x80 >> (p % 8)));
      EXPECT_EQ(count_bit_errors(t.pattern, false, state, data.data(), data.size()), k) << label(t);
    }
  }
}

TEST(Prbs, CountBitErrorsCountsEightForAByteXorFF) {
  for (const Taps& t : kPrbs) {
    const auto clean = generate(t.pattern, true, default_state(t.pattern), 999);
    for (std::size_t at : {0, 1, 7, 8, 15, 16, 17, 500, 991, 992, 998}) {
      auto data = clean;
      data[at] ^= 0xFF;
      EXPECT_EQ(count_bit_errors(t.pattern, true, default_state(t.pattern), data.data(), data.size()), 8u)
          << label(t) << " byte " << at;
    }
  }
}

TEST(Prbs, CountBitErrorsHandlesUnalignedPointersAndOddLengths) {
  for (const Taps& t : kPrbs) {
    for (std::size_t offset = 0; offset < 8; ++offset) {
      for (std::size_t bytes : {1, 3, 7, 9, 13, 31, 33, 63, 65, 257, 1499}) {
        // Bytes around the region are garbage: the checker must read neither.
        std::vector<std::uint8_t> buf(offset + bytes + 16, 0xA5);
        const std::uint32_t state = default_state(t.pattern) >> 1;
        fill_pattern(t.pattern, false, state, buf.data() + offset, bytes);
        const std::uint8_t* data = buf.data() + offset;
        EXPECT_EQ(count_bit_errors(t.pattern, false, state, data, bytes), 0u) << label(t) << " " << offset;
        buf[offset + bytes - 1] ^= 0x01;  // the very last bit
        buf[offset] ^= 0x80;              // the very first bit
        EXPECT_EQ(count_bit_errors(t.pattern, false, state, data, bytes), 2u) << label(t);
      }
    }
  }
}

TEST(Prbs, InvertedDataAgainstThePlainPatternCountsEveryBit) {
  for (const Taps& t : kPrbs) {
    const auto inverted = generate(t.pattern, true, default_state(t.pattern), 4097);
    EXPECT_EQ(count_bit_errors(t.pattern, false, default_state(t.pattern), inverted.data(), inverted.size()),
              8u * inverted.size())
        << label(t);
  }
}

// Whatever the data, the checker agrees with a byte-by-byte comparison.
TEST(Prbs, CountBitErrorsAgreesWithAByteWiseComparisonOnRandomData) {
  std::mt19937 rng(9);
  for (const Taps& t : kPrbs) {
    for (int round = 0; round < 20; ++round) {
      const std::size_t bytes = rng() % 3000;
      const std::uint32_t state = (rng() & ((std::uint32_t{1} << t.n) - 1)) | 1;
      const bool invert = (rng() & 1) != 0;
      std::vector<std::uint8_t> data(bytes);
      for (auto& b : data) b = static_cast<std::uint8_t>(rng());
      const auto expected = generate(t.pattern, invert, state, bytes);
      std::uint64_t differing = 0;
      for (std::size_t i = 0; i < bytes; ++i) {
        differing += static_cast<unsigned>(std::popcount(static_cast<std::uint8_t>(data[i] ^ expected[i])));
      }
      EXPECT_EQ(count_bit_errors(t.pattern, invert, state, data.data(), bytes), differing) << label(t);
    }
  }
}

// Bit errors against the bit-serial reference sequence (inverted or not) from `state`, byte by byte.
std::uint64_t reference_bit_errors(const Taps& t, bool invert, std::uint32_t state, const std::uint8_t* data,
                                   std::size_t bytes) {
  const auto expected = ReferenceLfsr(t.n, t.k, state).bytes(bytes, invert);
  std::uint64_t errors = 0;
  for (std::size_t i = 0; i < bytes; ++i) {
    errors += static_cast<unsigned>(std::popcount(static_cast<std::uint8_t>(data[i] ^ expected[i])));
  }
  return errors;
}

void flip_random_bits(std::vector<std::uint8_t>& buf, std::size_t offset, std::size_t bytes, std::size_t count,
                      std::mt19937& rng) {
  for (std::size_t i = 0; i < count && bytes > 0; ++i) {
    const std::size_t bit = rng() % (8 * bytes);
    buf[offset + bit / 8] = static_cast<std::uint8_t>(buf[offset + bit / 8] ^ (0x80 >> (bit % 8)));
  }
}

// Every length to 64 and lengths around the checker's 16-byte blocks and 1 KiB chunks, at every
// alignment, clean and with bits flipped anywhere (the same bit twice is no error): the count is the
// reference's, exactly.
TEST(Prbs, CountBitErrorsMatchesTheBitSerialReference) {
  at_every_vector_width([] {
    std::mt19937 rng(13);
    std::vector<std::size_t> lengths;
    for (std::size_t s = 0; s <= 64; ++s) lengths.push_back(s);
    for (std::size_t s : {79, 80, 95, 96, 97, 111, 127, 128, 129, 1023, 1024, 1025, 1500, 2047, 2049, 9000, 20000}) {
      lengths.push_back(s);
    }
    for (const Taps& t : kPrbs) {
      const std::uint32_t mask = (std::uint32_t{1} << t.n) - 1;
      for (bool invert : {false, true}) {
        std::vector<std::uint32_t> states = {mask, 1, std::uint32_t{1} << (t.n - 1)};
        for (int i = 0; i < 5; ++i) states.push_back((rng() & mask) | 1);
        for (std::uint32_t state : states) {
          for (std::size_t bytes : lengths) {
            const std::size_t offset = rng() % 16;
            // Garbage around the region: the checker must read neither side.
            std::vector<std::uint8_t> buf(offset + bytes + 16, 0xA5);
            ReferenceLfsr ref(t.n, t.k, state);
            const auto clean = ref.bytes(bytes, invert);
            std::copy(clean.begin(), clean.end(), buf.begin() + static_cast<std::ptrdiff_t>(offset));
            const std::uint8_t* data = buf.data() + offset;
            ASSERT_EQ(count_bit_errors(t.pattern, invert, state, data, bytes), 0u)
                << label(t) << " state " << state << " " << bytes << " bytes";
            for (std::size_t flips : {1, 2, 7}) {
              flip_random_bits(buf, offset, bytes, flips, rng);
              ASSERT_EQ(count_bit_errors(t.pattern, invert, state, data, bytes),
                        reference_bit_errors(t, invert, state, data, bytes))
                  << label(t) << (invert ? " inverted" : "") << " state " << state << " " << bytes << " bytes";
            }
          }
        }
      }
    }
  });
}

// Data that is a PRBS sequence, but not the expected one, obeys the sequence's own recurrence almost
// everywhere: a sequence from another state throughout, or from a seam on (a sender that restarted).
TEST(Prbs, CountBitErrorsOnTheSequenceFromAnotherState) {
  std::mt19937 rng(17);
  for (const Taps& t : kPrbs) {
    const std::uint32_t mask = (std::uint32_t{1} << t.n) - 1;
    for (bool invert : {false, true}) {
      for (int round = 0; round < 20; ++round) {
        const std::uint32_t state = (rng() & mask) | 1;
        const std::uint32_t other = (rng() & mask) | 1;
        const std::size_t bytes = 64 + rng() % 5000;
        const std::size_t seam = round == 0 ? 0 : rng() % bytes;
        std::vector<std::uint8_t> data = ReferenceLfsr(t.n, t.k, state).bytes(bytes, invert);
        const auto wrong = ReferenceLfsr(t.n, t.k, other).bytes(bytes - seam, invert);
        std::copy(wrong.begin(), wrong.end(), data.begin() + static_cast<std::ptrdiff_t>(seam));
        EXPECT_EQ(count_bit_errors(t.pattern, invert, state, data.data(), bytes),
                  reference_bit_errors(t, invert, state, data.data(), bytes))
            << label(t) << " seam at " << seam << " of " << bytes;
      }
    }
  }
}

TEST(Prbs, RejectsAnInvalidState) {
  EXPECT_THROW(PrbsGenerator(Pattern::Prbs7, false, 0), std::invalid_argument);
  EXPECT_THROW(PrbsGenerator(Pattern::Prbs7, false, 0x80), std::invalid_argument);
  EXPECT_THROW(PrbsGenerator(Pattern::Prbs31, true, 0x80000000u), std::invalid_argument);
  EXPECT_NO_THROW(PrbsGenerator(Pattern::Prbs31, true, 0x7FFFFFFFu));
  EXPECT_NO_THROW(PrbsGenerator(Pattern::Zeros, false, 0));
  EXPECT_FALSE(is_valid_state(Pattern::Prbs23, 0));
  EXPECT_TRUE(is_valid_state(Pattern::Prbs23, default_state(Pattern::Prbs23)));
  EXPECT_EQ(default_state(Pattern::Prbs9), 0x1FFu);
  try {
    PrbsGenerator(Pattern::Prbs15, false, 0);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("prbs15"), std::string::npos) << e.what();
  }
}

// The datapath calls never throw: they take the state as a register would hold it.
TEST(Prbs, DatapathCallsUseTheStateMaskedToTheRegister) {
  std::vector<std::uint8_t> a(100);
  std::vector<std::uint8_t> b(100);
  EXPECT_EQ(fill_pattern(Pattern::Prbs7, false, 0x35, a.data(), a.size()),
            fill_pattern(Pattern::Prbs7, false, 0xFFFFFF80u | 0x35, b.data(), b.size()));
  EXPECT_EQ(a, b);
  EXPECT_EQ(count_bit_errors(Pattern::Prbs7, false, 0xFFFFFF80u | 0x35, a.data(), a.size()), 0u);
  EXPECT_EQ(advance_state(Pattern::Prbs7, 0xFFFFFF80u | 0x35, 1000), advance_state(Pattern::Prbs7, 0x35, 1000));

  // A zero register is stuck at zero, so the data is compared against zeros.
  std::uint64_t ones = 0;
  for (std::uint8_t byte : a) ones += static_cast<unsigned>(std::popcount(byte));
  EXPECT_EQ(count_bit_errors(Pattern::Prbs31, false, 0, a.data(), a.size()), ones);
  EXPECT_EQ(fill_pattern(Pattern::Prbs31, false, 0, b.data(), b.size()), 0u);
  EXPECT_EQ(b, std::vector<std::uint8_t>(100, 0));
  EXPECT_EQ(advance_state(Pattern::Prbs31, 0, 12345), 0u);
}

TEST(Prbs, ZeroLengthCallsChangeNothing) {
  std::uint8_t byte = 0x42;
  for (const Taps& t : kPrbs) {
    EXPECT_EQ(fill_pattern(t.pattern, false, 5, &byte, 0), 5u);
    EXPECT_EQ(count_bit_errors(t.pattern, false, 5, &byte, 0), 0u);
  }
  EXPECT_EQ(byte, 0x42);
}

}  // namespace
}  // namespace tusk::payload
