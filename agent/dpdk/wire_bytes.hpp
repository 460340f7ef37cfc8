// Big-endian loads and stores of frame fields, byte by byte: frames are not aligned for wider
// access, and this is endian-agnostic. Datapath helpers; the compiler folds them into moves.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tusk::dpdk::wire {

inline void put16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}

inline void put32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}

inline void put64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
}

inline std::uint16_t get16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

inline std::uint32_t get32(const std::uint8_t* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | p[i];
  return v;
}

inline std::uint64_t get64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

// The Internet checksum (RFC 1071) of `length` bytes (even): the ones' complement of the ones'
// complement sum of their 16-bit words. Over a header with its checksum in place, 0 when right.
inline std::uint16_t internet_checksum(const std::uint8_t* p, std::size_t length) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < length; i += 2) sum += get16(p + i);
  if (length % 2 != 0) sum += static_cast<std::uint32_t>(p[length - 1]) << 8;
  while (sum >> 16) sum = (sum & 0xFFFFu) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

}  // namespace tusk::dpdk::wire
