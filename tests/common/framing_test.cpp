#include "common/framing.hpp"

#include <gtest/gtest.h>

#include <random>

namespace tusk::framing {
namespace {

proto::Envelope heartbeat(std::int64_t time_ns) {
  proto::Envelope envelope;
  envelope.mutable_heartbeat()->set_sender_time_ns(time_ns);
  return envelope;
}

TEST(Framing, HeaderIsMagicThenBigEndianLength) {
  const std::string frame = encode(heartbeat(1));
  ASSERT_GE(frame.size(), kHeaderSize);
  EXPECT_EQ(frame.substr(0, 4), "TUSK");
  const std::size_t payload = frame.size() - kHeaderSize;
  EXPECT_EQ(static_cast<unsigned char>(frame[7]), payload);
  EXPECT_EQ(frame[4], 0);
}

TEST(Framing, RoundTripsOneFrame) {
  FrameDecoder decoder;
  const std::string frame = encode(heartbeat(42));
  decoder.feed(frame.data(), frame.size());
  proto::Envelope out;
  std::string error;
  ASSERT_EQ(decoder.next(out, error), FrameDecoder::Status::Frame);
  EXPECT_EQ(out.heartbeat().sender_time_ns(), 42);
  EXPECT_EQ(decoder.next(out, error), FrameDecoder::Status::NeedMore);
}

TEST(Framing, PartialReadsOneByteAtATimeYieldTheFrameOnlyWhenComplete) {
  FrameDecoder decoder;
  const std::string frame = encode(heartbeat(7));
  proto::Envelope out;
  std::string error;
  for (std::size_t i = 0; i + 1 < frame.size(); ++i) {
    decoder.feed(&frame[i], 1);
    ASSERT_EQ(decoder.next(out, error), FrameDecoder::Status::NeedMore) << "after byte " << i;
  }
  decoder.feed(&frame.back(), 1);
  ASSERT_EQ(decoder.next(out, error), FrameDecoder::Status::Frame);
  EXPECT_EQ(out.heartbeat().sender_time_ns(), 7);
}

TEST(Framing, ConcatenatedFramesInOneReadComeOutInOrder) {
  FrameDecoder decoder;
  std::string stream;
  for (int i = 1; i <= 100; ++i) stream += encode(heartbeat(i));
  // Split at an awkward place so one frame straddles two reads.
  decoder.feed(stream.data(), 37);
  decoder.feed(stream.data() + 37, stream.size() - 37);
  proto::Envelope out;
  std::string error;
  for (int i = 1; i <= 100; ++i) {
    ASSERT_EQ(decoder.next(out, error), FrameDecoder::Status::Frame) << i;
    EXPECT_EQ(out.heartbeat().sender_time_ns(), i);
  }
  EXPECT_EQ(decoder.next(out, error), FrameDecoder::Status::NeedMore);
  EXPECT_EQ(decoder.buffered(), 0u);
}

TEST(Framing, OversizeLengthIsAnErrorBeforeThePayloadArrives) {
  FrameDecoder decoder(1024);
  const char header[] = {'T', 'U', 'S', 'K', 0x00, 0x00, 0x04, 0x01};  // 1025 bytes announced
  decoder.feed(header, sizeof(header));
  proto::Envelope out;
  std::string error;
  ASSERT_EQ(decoder.next(out, error), FrameDecoder::Status::Error);
  EXPECT_EQ(error, "frame of 1025 bytes exceeds the maximum of 1024");
}

TEST(Framing, EncodeRefusesAMessageOverTheMaximum) {
  proto::Envelope big;
  big.mutable_error()->set_message(std::string(2000, 'x'));
  EXPECT_THROW(encode(big, 1024), std::length_error);
}

TEST(Framing, GarbageBytesFailOnTheFirstByteThatIsNotTheMagic) {
  FrameDecoder decoder;
  const std::string http = "GET / HTTP/1.1\r\n";
  decoder.feed(http.data(), 1);  // "G": already not "T"
  proto::Envelope out;
  std::string error;
  ASSERT_EQ(decoder.next(out, error), FrameDecoder::Status::Error);
  EXPECT_NE(error.find("bad frame magic"), std::string::npos);
}

TEST(Framing, ValidHeaderWithUnparseablePayloadIsAnError) {
  FrameDecoder decoder;
  std::string frame = "TUSK";
  frame += std::string("\x00\x00\x00\x04", 4);
  frame += std::string("\xff\xff\xff\xff", 4);  // an invalid protobuf varint/tag sequence
  decoder.feed(frame.data(), frame.size());
  proto::Envelope out;
  std::string error;
  ASSERT_EQ(decoder.next(out, error), FrameDecoder::Status::Error);
  EXPECT_EQ(error, "frame of 4 bytes is not a valid Envelope");
}

TEST(Framing, EmptyEnvelopeIsAnError) {
  FrameDecoder decoder;
  const std::string frame = encode(proto::Envelope{});
  decoder.feed(frame.data(), frame.size());
  proto::Envelope out;
  std::string error;
  ASSERT_EQ(decoder.next(out, error), FrameDecoder::Status::Error);
  EXPECT_EQ(error, "frame carries an empty Envelope");
}

TEST(Framing, AfterAnErrorTheDecoderStaysFailed) {
  FrameDecoder decoder;
  decoder.feed("XXXX", 4);
  proto::Envelope out;
  std::string error;
  ASSERT_EQ(decoder.next(out, error), FrameDecoder::Status::Error);
  const std::string good = encode(heartbeat(1));
  decoder.feed(good.data(), good.size());
  EXPECT_EQ(decoder.next(out, error), FrameDecoder::Status::Error);
}

TEST(Framing, RandomBytesNeverCrashAndNeverYieldAFrameWithoutTheMagic) {
  std::mt19937 random(12345);
  for (int round = 0; round < 2000; ++round) {
    FrameDecoder decoder(4096);
    std::string bytes(1 + random() % 64, '\0');
    for (auto& b : bytes) b = static_cast<char>(random());
    decoder.feed(bytes.data(), bytes.size());
    proto::Envelope out;
    std::string error;
    auto status = decoder.next(out, error);
    if (bytes.compare(0, 4, "TUSK") != 0) {
      EXPECT_NE(status, FrameDecoder::Status::Frame);
    }
  }
}

}  // namespace
}  // namespace tusk::framing
