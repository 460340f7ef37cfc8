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

// Every way crc32c can be computed gives today's table's values: each size 0..4096 at every
// alignment mod 8, random large sizes, and continued across pieces that each way cuts differently.
TEST(Crc32c, EveryWayGivesTheTablesValuesAtEverySizeAndAlignment) {
  std::mt19937 random(11);
  std::vector<std::uint8_t> buffer((std::size_t{1} << 23) + 64);
  for (auto& byte : buffer) byte = static_cast<std::uint8_t>(random());
  for (std::size_t length = 0; length <= 4096; ++length) {
    const std::uint8_t* p = buffer.data() + length % 8;
    const std::uint32_t want = tusk::crc32c_ways::table(p, length);
    ASSERT_EQ(tusk::crc32c(p, length), want) << length;
    ASSERT_EQ(tusk::crc32c_ways::one_chain(p, length), want) << length;
    ASSERT_EQ(tusk::crc32c_ways::isal(p, length), want) << length;
  }
  std::uniform_int_distribution<std::size_t> large(4097, (std::size_t{1} << 23) - 1);
  for (int i = 0; i < 12; ++i) {
    const std::size_t length = large(random);
    const std::uint8_t* p = buffer.data() + length % 61;
    const std::uint32_t want = tusk::crc32c_ways::table(p, length);
    ASSERT_EQ(tusk::crc32c(p, length), want) << length;
    ASSERT_EQ(tusk::crc32c_ways::isal(p, length), want) << length;
    const std::size_t cut = length / 3 + 5;
    ASSERT_EQ(tusk::crc32c_extend(tusk::crc32c(p, cut), p + cut, length - cut), want) << length;
  }
}

}  // namespace
