#include "agent/rdma/message_format.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace tusk::rdma {
namespace {

std::vector<std::uint8_t> message(std::uint32_t flow, std::uint64_t seq, std::size_t length) {
  std::vector<std::uint8_t> bytes(length);
  const std::uint32_t crc = fill_message_payload(bytes.data(), bytes.size());
  write_message_header(bytes.data(), {flow, seq, static_cast<std::uint32_t>(length), crc});
  return bytes;
}

TEST(RdmaMessage, AnIntactMessageChecksOk) {
  const auto bytes = message(3, 1234567890123ull, 4096);
  EXPECT_EQ(check_message(bytes.data(), bytes.size(), 3, 1234567890123ull), MessageCheck::Ok);
}

TEST(RdmaMessage, EveryFlippedPayloadBitIsCaught) {
  auto bytes = message(1, 7, 256);
  for (std::size_t bit = kMessageHeaderBytes * 8; bit < bytes.size() * 8; bit += 13) {
    bytes[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    EXPECT_EQ(check_message(bytes.data(), bytes.size(), 1, 7), MessageCheck::BadPayload) << "bit " << bit;
    bytes[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
  }
}

TEST(RdmaMessage, WrongFlowSequenceLengthOrMagicAreNamed) {
  auto bytes = message(2, 10, 512);
  EXPECT_EQ(check_message(bytes.data(), bytes.size(), 5, 10), MessageCheck::WrongFlow);
  EXPECT_EQ(check_message(bytes.data(), bytes.size(), 2, 11), MessageCheck::WrongSequence);
  EXPECT_EQ(check_message(bytes.data(), 500, 2, 10), MessageCheck::WrongLength);
  EXPECT_EQ(check_message(bytes.data(), 10, 2, 10), MessageCheck::WrongLength);
  bytes[0] ^= 1;
  EXPECT_EQ(check_message(bytes.data(), bytes.size(), 2, 10), MessageCheck::BadMagic);
}

// A message outside check_every's sample: its header is held as ever, its payload not read.
TEST(RdmaMessage, OutsideTheSampleTheHeaderIsCheckedAndThePayloadIsNot) {
  auto bytes = message(2, 10, 512);
  bytes[100] ^= 0x10;
  EXPECT_EQ(check_message(bytes.data(), bytes.size(), 2, 10, false), MessageCheck::Ok);
  EXPECT_EQ(check_message(bytes.data(), bytes.size(), 2, 10, true), MessageCheck::BadPayload);
  EXPECT_EQ(check_message(bytes.data(), bytes.size(), 2, 11, false), MessageCheck::WrongSequence);
  EXPECT_EQ(check_message(bytes.data(), 500, 2, 10, false), MessageCheck::WrongLength);
}

TEST(RdmaMessage, AHeaderOnlyMessageHasAnEmptyPayload) {
  const auto bytes = message(0, 0, kMessageHeaderBytes);
  EXPECT_EQ(check_message(bytes.data(), bytes.size(), 0, 0), MessageCheck::Ok);
}

}  // namespace
}  // namespace tusk::rdma
