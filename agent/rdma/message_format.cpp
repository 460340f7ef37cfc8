#include "agent/rdma/message_format.hpp"

#include <cstring>

#include "agent/payload/prbs.hpp"
#include "common/crc32c.hpp"

namespace tusk::rdma {

namespace {

template <class T>
void put(std::uint8_t* at, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) at[i] = static_cast<std::uint8_t>(value >> (8 * i));
}

template <class T>
T get(const std::uint8_t* at) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(at[i]) << (8 * i);
  return value;
}

}  // namespace

void write_message_header(std::uint8_t* message, const MessageHeader& header) {
  put<std::uint32_t>(message, kMessageMagic);
  put<std::uint32_t>(message + 4, header.flow_id);
  put<std::uint64_t>(message + 8, header.seq);
  put<std::uint32_t>(message + 16, header.length);
  put<std::uint32_t>(message + 20, header.payload_crc);
}

std::uint32_t payload_crc(const std::uint8_t* message, std::size_t length) {
  return length <= kMessageHeaderBytes ? crc32c(nullptr, 0)
                                       : crc32c(message + kMessageHeaderBytes, length - kMessageHeaderBytes);
}

std::uint32_t fill_message_payload(std::uint8_t* message, std::size_t length) {
  if (length > kMessageHeaderBytes) {
    payload::PrbsGenerator prbs(payload::Pattern::Prbs31, false, payload::default_state(payload::Pattern::Prbs31));
    prbs.fill(message + kMessageHeaderBytes, length - kMessageHeaderBytes);
  }
  return payload_crc(message, length);
}

const char* to_string(MessageCheck check) {
  switch (check) {
    case MessageCheck::Ok:
      return "ok";
    case MessageCheck::BadMagic:
      return "bad magic";
    case MessageCheck::WrongFlow:
      return "wrong flow id";
    case MessageCheck::WrongSequence:
      return "wrong sequence number";
    case MessageCheck::WrongLength:
      return "wrong length";
    case MessageCheck::BadPayload:
      return "payload CRC mismatch";
  }
  return "unknown";
}

MessageCheck check_message(const std::uint8_t* message, std::size_t length, std::uint32_t flow_id, std::uint64_t seq,
                           bool check_payload) {
  if (length < kMessageHeaderBytes) return MessageCheck::WrongLength;
  if (get<std::uint32_t>(message) != kMessageMagic) return MessageCheck::BadMagic;
  if (get<std::uint32_t>(message + 4) != flow_id) return MessageCheck::WrongFlow;
  if (get<std::uint64_t>(message + 8) != seq) return MessageCheck::WrongSequence;
  if (get<std::uint32_t>(message + 16) != length) return MessageCheck::WrongLength;
  if (!check_payload) return MessageCheck::Ok;
  return payload_crc(message, length) == get<std::uint32_t>(message + 20) ? MessageCheck::Ok : MessageCheck::BadPayload;
}

}  // namespace tusk::rdma
