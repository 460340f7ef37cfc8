// TEST ONLY. A blocking, plaintext stand-in for an agent's side of the wire, so controller-side
// tests can send exactly the frames they mean to (good, bad, or resent) and read the answers.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/framing.hpp"
#include "common/version.hpp"

namespace tusk::testing {

class RawAgent {
 public:
  explicit RawAgent(std::uint16_t port) : socket_(io_) {
    socket_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  }

  void send(const proto::Envelope& message) { send_bytes(framing::encode(message)); }
  void send_bytes(const std::string& bytes) { boost::asio::write(socket_, boost::asio::buffer(bytes)); }

  void hello(const std::string& name, std::uint64_t instance, std::uint64_t first_unacked = 1,
             proto::ProtocolVersion version = kProtocolVersion) {
    proto::Envelope envelope;
    auto* hello = envelope.mutable_hello();
    hello->set_protocol_version(version);
    hello->set_agent_name(name);
    hello->set_agent_instance(instance);
    hello->mutable_state()->set_first_unacked_seq(first_unacked);
    hello->mutable_inventory()->add_engines("dpdk");
    send(envelope);
  }

  // The next frame of the given kind, skipping heartbeats; nullopt when the controller closed
  // the connection or nothing came within the timeout.
  std::optional<proto::Envelope> next(proto::Envelope::BodyCase kind,
                                      std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    proto::Envelope message;
    std::string error;
    while (std::chrono::steady_clock::now() < deadline) {
      while (decoder_.next(message, error) == framing::FrameDecoder::Status::Frame) {
        if (message.body_case() == kind) return message;
      }
      if (!read_some(deadline)) return std::nullopt;
    }
    return std::nullopt;
  }

  struct Arrival {
    std::chrono::steady_clock::time_point at;
    proto::Envelope::BodyCase kind;
  };
  // Every frame that arrives within `duration`, with when it was read (5 ms resolution).
  std::vector<Arrival> frames_for(std::chrono::milliseconds duration) {
    const auto deadline = std::chrono::steady_clock::now() + duration;
    std::vector<Arrival> arrivals;
    proto::Envelope message;
    std::string error;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!read_some(deadline)) break;
      while (decoder_.next(message, error) == framing::FrameDecoder::Status::Frame) {
        arrivals.push_back({std::chrono::steady_clock::now(), message.body_case()});
      }
    }
    return arrivals;
  }

  // True when the controller closed the connection within the timeout.
  bool closed_by_peer(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!read_some(deadline)) return eof_;
    }
    return false;
  }

  void close() {
    boost::system::error_code ec;
    socket_.close(ec);
  }

 private:
  bool read_some(std::chrono::steady_clock::time_point deadline) {
    char buffer[4096];
    socket_.non_blocking(true);
    while (std::chrono::steady_clock::now() < deadline) {
      boost::system::error_code ec;
      const std::size_t n = socket_.read_some(boost::asio::buffer(buffer), ec);
      if (ec == boost::asio::error::would_block) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      if (ec) {
        eof_ = true;
        return false;
      }
      decoder_.feed(buffer, n);
      return true;
    }
    return false;
  }

  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
  framing::FrameDecoder decoder_;
  bool eof_ = false;
};

}  // namespace tusk::testing
