// What every checked RDMA message carries at its start, so the receiver can prove the bytes it got
// are the bytes that were sent: flow id, sequence number, length and a CRC-32C of the payload.
//
//   +0  u32 magic "TKRM"    +4  u32 flow id    +8  u64 sequence number
//   +16 u32 message length (header included)   +20 u32 CRC-32C of bytes [24, length)
// Little-endian. The payload after the header is PRBS-31, written once per buffer slot: the
// sender rewrites only the header for each message.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/rdma_limits.hpp"

namespace tusk::rdma {

inline constexpr std::size_t kMessageHeaderBytes = rdma_limits::kCheckedMessageHeaderBytes;
inline constexpr std::uint32_t kMessageMagic = 0x4D524B54;  // "TKRM" read as little-endian bytes

struct MessageHeader {
  std::uint32_t flow_id = 0;
  std::uint64_t seq = 0;
  std::uint32_t length = 0;
  std::uint32_t payload_crc = 0;
};

// Writes the header at `message`.
void write_message_header(std::uint8_t* message, const MessageHeader& header);

// CRC-32C of the payload of a `length`-byte message: bytes [kMessageHeaderBytes, length).
std::uint32_t payload_crc(const std::uint8_t* message, std::size_t length);

// Fills `message[kMessageHeaderBytes, length)` with PRBS-31 and returns its CRC-32C.
std::uint32_t fill_message_payload(std::uint8_t* message, std::size_t length);

enum class MessageCheck { Ok, BadMagic, WrongFlow, WrongSequence, WrongLength, BadPayload };
const char* to_string(MessageCheck check);

// Checks the message that arrived as `length` bytes at `message` against what the receiver
// expects: its header always, its payload's CRC where `check_payload`. A message shorter than its
// header is WrongLength.
MessageCheck check_message(const std::uint8_t* message, std::size_t length, std::uint32_t flow_id, std::uint64_t seq,
                           bool check_payload = true);

}  // namespace tusk::rdma
