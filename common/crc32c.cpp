#include "common/crc32c.hpp"

#include <array>
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

// Raw CRC register in, raw register out (no inversion), so both paths can continue a CRC.
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

std::uint32_t update(std::uint32_t crc, const void* data, std::size_t length) {
  const auto* p = static_cast<const std::uint8_t*>(data);
#if defined(__x86_64__)
  if (kHaveSse42) return update_sse42(crc, p, length);
#endif
  return update_table(crc, p, length);
}

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t length) {
  return crc32c_extend(0, data, length);
}

std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t length) {
  return update(crc ^ 0xFFFFFFFFu, data, length) ^ 0xFFFFFFFFu;
}

}  // namespace tusk
