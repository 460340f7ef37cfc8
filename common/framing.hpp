// Framing of Envelopes on a byte stream: an 8-byte header ("TUSK" then the payload length as a
// big-endian u32) followed by the serialized Envelope. The magic makes a stray client or a
// desynchronised stream fail at once instead of being read as a huge length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tusk.pb.h"

namespace tusk::framing {

inline constexpr std::string_view kMagic = "TUSK";
inline constexpr std::size_t kHeaderSize = 8;
inline constexpr std::uint32_t kDefaultMaxFrame = 16u << 20;

// Header and payload of one frame. Throws std::length_error when the message exceeds max_frame.
std::string encode(const proto::Envelope& message, std::uint32_t max_frame = kDefaultMaxFrame);

// Incremental decoder: feed it whatever the socket returned, then take frames until NeedMore.
// After an Error the stream cannot be trusted again; the caller closes the connection.
class FrameDecoder {
 public:
  enum class Status { NeedMore, Frame, Error };

  explicit FrameDecoder(std::uint32_t max_frame = kDefaultMaxFrame) : max_frame_(max_frame) {}

  // Frames whose header is read from now on are held to `max_frame`.
  void set_max_frame(std::uint32_t max_frame) { max_frame_ = max_frame; }
  void feed(const char* data, std::size_t size);
  // On Frame, `out` holds the message; on Error, `error` says why.
  Status next(proto::Envelope& out, std::string& error);
  std::size_t buffered() const { return buffer_.size() - read_offset_; }

 private:
  std::uint32_t max_frame_;
  std::string buffer_;
  std::size_t read_offset_ = 0;
  bool failed_ = false;
};

}  // namespace tusk::framing
