// The control plane's first reader of every byte a peer sends: the frame decoder, fed the input
// in pieces whose sizes the input chooses, as TCP would split it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/framing.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the frame limit (as before and after a hello) and the piece size.
  const std::uint32_t max_frame = (data[0] & 1) ? (256u << 10) : tusk::framing::kDefaultMaxFrame;
  const std::size_t piece = 1 + (data[0] >> 1);
  tusk::framing::FrameDecoder decoder(max_frame);
  tusk::proto::Envelope message;
  std::string error;
  for (std::size_t at = 1; at < size; at += piece) {
    const std::size_t n = std::min(piece, size - at);
    decoder.feed(reinterpret_cast<const char*>(data + at), n);
    for (;;) {
      const auto status = decoder.next(message, error);
      if (status == tusk::framing::FrameDecoder::Status::Error) return 0;  // the connection would close
      if (status == tusk::framing::FrameDecoder::Status::NeedMore) break;
      // A decoded frame must encode again within the same limit.
      (void)tusk::framing::encode(message, max_frame);
    }
  }
  return 0;
}
