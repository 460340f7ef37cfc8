#include "common/framing.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace tusk::framing {

std::string encode(const proto::Envelope& message, std::uint32_t max_frame) {
  const std::size_t size = message.ByteSizeLong();
  if (size > max_frame) {
    throw std::length_error(fmt::format("frame of {} bytes exceeds the maximum of {}", size, max_frame));
  }
  std::string frame;
  frame.resize(kHeaderSize + size);
  frame.replace(0, kMagic.size(), kMagic);
  frame[4] = static_cast<char>((size >> 24) & 0xff);
  frame[5] = static_cast<char>((size >> 16) & 0xff);
  frame[6] = static_cast<char>((size >> 8) & 0xff);
  frame[7] = static_cast<char>(size & 0xff);
  message.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(frame.data() + kHeaderSize));
  return frame;
}

void FrameDecoder::feed(const char* data, std::size_t size) {
  // Drop consumed bytes before growing, so a long-lived connection keeps a small buffer.
  if (read_offset_ > 0 && read_offset_ >= buffer_.size() / 2) {
    buffer_.erase(0, read_offset_);
    read_offset_ = 0;
  }
  buffer_.append(data, size);
}

FrameDecoder::Status FrameDecoder::next(proto::Envelope& out, std::string& error) {
  if (failed_) {
    error = "decoder already failed";
    return Status::Error;
  }
  const std::size_t available = buffered();
  const char* head = buffer_.data() + read_offset_;
  // Check the magic as soon as its bytes arrive, not only once a full header is in.
  const std::size_t magic_bytes = std::min(available, kMagic.size());
  if (std::string_view(head, magic_bytes) != kMagic.substr(0, magic_bytes)) {
    failed_ = true;
    error = "bad frame magic (not a Tusk peer, or the stream is out of step)";
    return Status::Error;
  }
  if (available < kHeaderSize) return Status::NeedMore;
  const auto* u = reinterpret_cast<const unsigned char*>(head);
  const std::uint32_t length =
      (std::uint32_t{u[4]} << 24) | (std::uint32_t{u[5]} << 16) | (std::uint32_t{u[6]} << 8) | std::uint32_t{u[7]};
  if (length > max_frame_) {
    failed_ = true;
    error = fmt::format("frame of {} bytes exceeds the maximum of {}", length, max_frame_);
    return Status::Error;
  }
  if (available < kHeaderSize + length) return Status::NeedMore;
  out.Clear();
  if (!out.ParseFromArray(head + kHeaderSize, static_cast<int>(length))) {
    failed_ = true;
    error = fmt::format("frame of {} bytes is not a valid Envelope", length);
    return Status::Error;
  }
  if (out.body_case() == proto::Envelope::BODY_NOT_SET) {
    failed_ = true;
    error = "frame carries an empty Envelope";
    return Status::Error;
  }
  read_offset_ += kHeaderSize + length;
  return Status::Frame;
}

}  // namespace tusk::framing
