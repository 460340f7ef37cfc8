// One framed, optionally TLS-protected control connection. Owns its socket; single-threaded:
// every call and every handler runs on the io_context thread that owns the socket.
//
// A malformed, oversized or garbage frame, a handshake that does not finish in time, or a peer
// that stops reading while we queue more than Limits::max_queued_bytes, closes the connection with
// a reason given to the close handler; nothing here can stall or crash the process.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/framing.hpp"
#include "tusk.pb.h"

namespace tusk {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  struct Limits {
    std::uint32_t max_frame = framing::kDefaultMaxFrame;
    std::size_t max_queued_bytes = 64u << 20;
    std::chrono::milliseconds handshake_timeout{std::chrono::seconds(10)};
  };
  using MessageHandler = std::function<void(proto::Envelope&)>;
  using CloseHandler = std::function<void(const std::string& reason)>;

  // `tls` null means plaintext (only with an explicit --insecure). The context must outlive us.
  static std::shared_ptr<Connection> create(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls,
                                            Limits limits);
  Connection(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls, Limits limits);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The controller side: TLS handshake as server, then read frames until closed.
  void start_as_server(MessageHandler on_message, CloseHandler on_close);
  // The agent side: TLS handshake as client, verifying that the server's certificate names
  // `expected_host`; frames sent before the handshake finishes wait in the queue.
  void start_as_client(const std::string& expected_host, MessageHandler on_message, CloseHandler on_close);

  void send(const proto::Envelope& message);
  // Whether send() queued a frame within `period`: a peer hears from us anyway, no heartbeat needed.
  bool sent_within(std::chrono::steady_clock::duration period) const {
    return std::chrono::steady_clock::now() - last_send_ < period;
  }
  // When send() last queued a frame: for a caller that checks thousands of connections at one now.
  std::chrono::steady_clock::time_point last_send() const { return last_send_; }
  // Changes the largest frame accepted from now on (the controller allows a small hello, then
  // the full size once the peer is known). Call on the connection's io thread.
  void set_max_frame(std::uint32_t max_frame);
  // Idempotent; the close handler runs once, with the first reason, posted to the io thread.
  void close(const std::string& reason);

  bool is_open() const { return !closed_; }
  bool encrypted() const { return tls_ != nullptr; }
  const std::string& remote() const { return remote_; }
  // Common name of the peer's verified certificate (TLS only).
  std::optional<std::string> peer_common_name();
  // DNS names of the peer's verified certificate (TLS only; empty without).
  std::vector<std::string> peer_dns_names();
  // OpenSSL's handle of this connection (TLS only), e.g. to present a certificate of its own
  // before start_as_client.
  ssl_st* tls_handle() { return tls_ ? stream_.native_handle() : nullptr; }

 private:
  void start(bool as_server, const std::string& expected_host);
  void on_ready();
  void read_more();
  void on_read(std::size_t bytes);
  void write_next();

  boost::asio::ssl::context* tls_;
  boost::asio::ssl::stream<boost::asio::ip::tcp::socket> stream_;
  boost::asio::steady_timer handshake_timer_;
  Limits limits_;
  framing::FrameDecoder decoder_;
  std::string remote_;
  // The server side: the CN of the certificate the peer presented, read while it is verified, so
  // that a handshake that fails names who tried (its IP alone says little on a fabric).
  std::string presented_name_;
  MessageHandler on_message_;
  CloseHandler on_close_;
  // One TLS record's worth: a larger buffer only costs memory on every idle connection.
  std::array<char, 16 * 1024> read_buffer_{};
  std::deque<std::string> write_queue_;
  std::size_t queued_bytes_ = 0;
  std::chrono::steady_clock::time_point last_send_{};
  bool ready_ = false;
  bool writing_ = false;
  // Read from other threads (is_open), written on the connection's own.
  std::atomic<bool> closed_{false};
};

}  // namespace tusk
