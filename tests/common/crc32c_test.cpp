#include "common/crc32c.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

// Bit at a time, straight from the definition: the reference the fast paths must match.
std::uint32_t crc32c_bitwise(const std::vector<std::uint8_t>& data) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::uint8_t byte : data) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1u) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  }
  return crc ^ 0xFFFFFFFFu;
}

TEST(Crc32c, MatchesTheStandardCheckValue) {
  const std::string check = "123456789";
  EXPECT_EQ(tusk::crc32c(check.data(), check.size()), 0xE3069283u);
  EXPECT_EQ(tusk::crc32c(nullptr, 0), 0u);
}

TEST(Crc32c, MatchesTheBitwiseDefinitionAtEveryLengthAndAlignment) {
  std::mt19937 random(7);
  std::vector<std::uint8_t> buffer(300);
  for (auto& byte : buffer) byte = static_cast<std::uint8_t>(random());
  for (std::size_t offset = 0; offset < 8; ++offset) {
    for (std::size_t length = 0; length + offset <= buffer.size(); length += 7) {
      const std::vector<std::uint8_t> slice(buffer.begin() + offset, buffer.begin() + offset + length);
      ASSERT_EQ(tusk::crc32c(slice.data(), slice.size()), crc32c_bitwise(slice)) << offset << "+" << length;
    }
  }
}

TEST(Crc32c, ExtendContinuesACrcAcrossPieces) {
  const std::string text = "a payload that arrives in two pieces";
  const std::uint32_t whole = tusk::crc32c(text.data(), text.size());
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    const std::uint32_t head = tusk::crc32c(text.data(), cut);
    EXPECT_EQ(tusk::crc32c_extend(head, text.data() + cut, text.size() - cut), whole) << cut;
  }
}

}  // namespace
