#include "common/crc32c.hpp"

#include <isa-l/crc.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>

namespace tusk {

namespace {

constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr std::array<std::uint32_t, 256> kTable = make_table();

// Every update takes the raw CRC register and returns it (no inversion), so each can continue a CRC.
std::uint32_t update_table(std::uint32_t crc, const std::uint8_t* p, std::size_t length) {
  for (std::size_t i = 0; i < length; ++i) crc = kTable[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t update_sse42(std::uint32_t crc, const std::uint8_t* p,
                                                             std::size_t length) {
  std::uint64_t wide = crc;
  for (; length >= 8; length -= 8, p += 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    wide = __builtin_ia32_crc32di(wide, word);
  }
  auto narrow = static_cast<std::uint32_t>(wide);
  for (; length > 0; --length, ++p) narrow = __builtin_ia32_crc32qi(narrow, *p);
  return narrow;
}

const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

std::uint32_t update_one_chain(std::uint32_t crc, const std::uint8_t* p, std::size_t length) {
#if defined(__x86_64__)
  if (kHaveSse42) return update_sse42(crc, p, length);
#endif
  return update_table(crc, p, length);
}

// crc32_iscsi takes an int length (and a non-const pointer it only reads).
std::uint32_t update_isal(std::uint32_t crc, const std::uint8_t* p, std::size_t length) {
  constexpr std::size_t kMaxCall = std::size_t{1} << 30;
  while (length > 0) {
    const std::size_t now = std::min(length, kMaxCall);
    crc = crc32_iscsi(const_cast<std::uint8_t*>(p), static_cast<int>(now), crc);
    p += now;
    length -= now;
  }
  return crc;
}

// Below this, the inline chain is faster than a call into ISA-L, whose folding needs some bytes to
// pay for itself (bench/crc_bench on this project's x86-64 machine: 64 B chain 13.1 GB/s, ISA-L 8.8;
// 256 B chain 18.7, ISA-L 27.1).
constexpr std::size_t kIsalFromBytes = 256;

std::uint32_t update(std::uint32_t crc, const void* data, std::size_t length) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  return length < kIsalFromBytes ? update_one_chain(crc, p, length) : update_isal(crc, p, length);
}

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t length) {
  return crc32c_extend(0, data, length);
}

std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t length) {
  return update(crc ^ 0xFFFFFFFFu, data, length) ^ 0xFFFFFFFFu;
}

namespace crc32c_ways {

std::uint32_t table(const void* data, std::size_t length) {
  return update_table(0xFFFFFFFFu, static_cast<const std::uint8_t*>(data), length) ^ 0xFFFFFFFFu;
}

std::uint32_t one_chain(const void* data, std::size_t length) {
  return update_one_chain(0xFFFFFFFFu, static_cast<const std::uint8_t*>(data), length) ^ 0xFFFFFFFFu;
}

std::uint32_t isal(const void* data, std::size_t length) {
  return update_isal(0xFFFFFFFFu, static_cast<const std::uint8_t*>(data), length) ^ 0xFFFFFFFFu;
}

}  // namespace crc32c_ways

}  // namespace tusk
