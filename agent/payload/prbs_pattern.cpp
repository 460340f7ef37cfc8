// The patterns' names and degrees, and the jump-ahead of a PRBS register: what prbs.hpp offers
// beside the datapath's fill and check, none of it on a per-frame path.
#include "agent/payload/prbs.hpp"

#include <array>
#include <bit>
#include <cstdint>

namespace tusk::payload {
namespace {

// Jump-ahead: M is the one-bit step of the register as a GF(2) matrix (column c = image of bit c);
// powers[i] = M^(2^i). Since M^(2^n - 1) = I, bits reduce modulo the period and n powers suffice.
template <unsigned N, unsigned K>
struct Jump {
  using Matrix = std::array<std::uint32_t, N>;

  static constexpr std::uint32_t apply(const Matrix& m, std::uint32_t v) {
    std::uint32_t r = 0;
    for (; v != 0; v &= v - 1) r ^= m[static_cast<unsigned>(std::countr_zero(v))];
    return r;
  }

  static constexpr std::array<Matrix, N> make_powers() {
    std::array<Matrix, N> powers{};
    for (unsigned c = 0; c < N; ++c) {
      const std::uint32_t shifted = c + 1 < N ? std::uint32_t{1} << (c + 1) : 0;
      powers[0][c] = shifted | std::uint32_t{c == N - 1 || c == K - 1};
    }
    for (unsigned i = 1; i < N; ++i) {
      for (unsigned c = 0; c < N; ++c) powers[i][c] = apply(powers[i - 1], powers[i - 1][c]);
    }
    return powers;
  }

  static constexpr std::array<Matrix, N> kPowers = make_powers();

  static std::uint32_t advance(std::uint32_t state, std::uint64_t bits) {
    constexpr std::uint64_t period = (std::uint64_t{1} << N) - 1;
    state &= static_cast<std::uint32_t>(period);
    bits %= period;
    for (unsigned i = 0; bits != 0; ++i, bits >>= 1) {
      if (bits & 1) state = apply(kPowers[i], state);
    }
    return state;
  }
};

struct NameEntry {
  Pattern pattern;
  std::string_view name;
  unsigned degree;
  unsigned tap;
};

constexpr std::array<NameEntry, 9> kPatterns{{
    {Pattern::Prbs7, "prbs7", 7, 6},
    {Pattern::Prbs9, "prbs9", 9, 5},
    {Pattern::Prbs11, "prbs11", 11, 9},
    {Pattern::Prbs15, "prbs15", 15, 14},
    {Pattern::Prbs23, "prbs23", 23, 18},
    {Pattern::Prbs31, "prbs31", 31, 28},
    {Pattern::Zeros, "zeros", 0, 0},
    {Pattern::Ones, "ones", 0, 0},
    {Pattern::Alternating, "alternating", 0, 0},
}};

const NameEntry* entry_of(Pattern pattern) {
  for (const NameEntry& e : kPatterns) {
    if (e.pattern == pattern) return &e;
  }
  return nullptr;
}

}  // namespace

std::optional<Pattern> pattern_from_name(std::string_view name) {
  for (const NameEntry& e : kPatterns) {
    if (e.name == name) return e.pattern;
  }
  return std::nullopt;
}

std::string_view name_of(Pattern pattern) {
  const NameEntry* e = entry_of(pattern);
  return e != nullptr ? e->name : std::string_view("unknown");
}

unsigned degree(Pattern pattern) {
  const NameEntry* e = entry_of(pattern);
  return e != nullptr ? e->degree : 0;
}

unsigned tap(Pattern pattern) {
  const NameEntry* e = entry_of(pattern);
  return e != nullptr ? e->tap : 0;
}

bool is_valid_state(Pattern pattern, std::uint32_t state) {
  const unsigned n = degree(pattern);
  return n == 0 || (state != 0 && (state >> n) == 0);
}

std::uint32_t default_state(Pattern pattern) {
  const unsigned n = degree(pattern);
  return n == 0 ? 0 : (std::uint32_t{1} << n) - 1;
}

std::uint32_t advance_state(Pattern pattern, std::uint32_t state, std::uint64_t bits) {
  switch (pattern) {
    case Pattern::Prbs7:
      return Jump<7, 6>::advance(state, bits);
    case Pattern::Prbs9:
      return Jump<9, 5>::advance(state, bits);
    case Pattern::Prbs11:
      return Jump<11, 9>::advance(state, bits);
    case Pattern::Prbs15:
      return Jump<15, 14>::advance(state, bits);
    case Pattern::Prbs23:
      return Jump<23, 18>::advance(state, bits);
    case Pattern::Prbs31:
      return Jump<31, 28>::advance(state, bits);
    case Pattern::Zeros:
    case Pattern::Ones:
    case Pattern::Alternating:
      break;
  }
  return state;
}

}  // namespace tusk::payload
