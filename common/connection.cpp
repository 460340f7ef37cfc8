#include "common/connection.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <openssl/x509.h>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/write.hpp>
#include <iterator>

#include "common/printable.hpp"
#include "common/tls.hpp"

namespace tusk {
namespace asio = boost::asio;
using boost::system::error_code;

namespace {
// asio's ssl::stream needs a context even on a plaintext connection that never handshakes.
asio::ssl::context& plaintext_placeholder_context() {
  static asio::ssl::context context(asio::ssl::context::tls);
  return context;
}

std::string describe_endpoint(const asio::ip::tcp::socket& socket) {
  error_code ec;
  auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "unknown peer";
  return fmt::format("{}:{}", endpoint.address().to_string(), endpoint.port());
}
}  // namespace

std::shared_ptr<Connection> Connection::create(asio::ip::tcp::socket socket, asio::ssl::context* tls, Limits limits) {
  return std::make_shared<Connection>(std::move(socket), tls, limits);
}

Connection::Connection(asio::ip::tcp::socket socket, asio::ssl::context* tls, Limits limits)
    : tls_(tls),
      stream_(std::move(socket), tls ? *tls : plaintext_placeholder_context()),
      handshake_timer_(stream_.get_executor()),
      limits_(limits),
      decoder_(limits.max_frame),
      remote_(describe_endpoint(stream_.next_layer())) {
  error_code ec;
  stream_.next_layer().set_option(asio::ip::tcp::no_delay(true), ec);
}

Connection::~Connection() {
  error_code ec;
  stream_.lowest_layer().close(ec);
}

void Connection::start_as_server(MessageHandler on_message, CloseHandler on_close) {
  on_message_ = std::move(on_message);
  on_close_ = std::move(on_close);
  start(true, "");
}

void Connection::start_as_client(const std::string& expected_host, MessageHandler on_message, CloseHandler on_close) {
  on_message_ = std::move(on_message);
  on_close_ = std::move(on_close);
  start(false, expected_host);
}

void Connection::start(bool as_server, const std::string& expected_host) {
  if (!tls_) {
    on_ready();
    return;
  }
  handshake_timer_.expires_after(limits_.handshake_timeout);
  handshake_timer_.async_wait([self = shared_from_this()](error_code ec) {
    if (!ec) self->close("TLS handshake timed out");
  });
  if (as_server) {
    stream_.set_verify_callback([this](bool preverified, asio::ssl::verify_context& context) {
      X509_STORE_CTX* store = context.native_handle();
      if (X509* certificate = X509_STORE_CTX_get_current_cert(store);
          certificate != nullptr && X509_STORE_CTX_get_error_depth(store) == 0) {
        char name[256] = "";
        if (X509_NAME_get_text_by_NID(X509_get_subject_name(certificate), NID_commonName, name, sizeof name) > 0) {
          presented_name_ = name;
        }
      }
      return preverified;
    });
  } else {
    stream_.set_verify_callback(asio::ssl::host_name_verification(expected_host));
  }
  stream_.async_handshake(
      as_server ? asio::ssl::stream_base::server : asio::ssl::stream_base::client,
      [self = shared_from_this()](error_code ec) {
        self->handshake_timer_.cancel();
        if (ec) {
          self->close(fmt::format("TLS handshake failed: {}{}", ec.message(),
                                  self->presented_name_.empty() ? std::string()
                                                                : fmt::format(" (its certificate says CN={})",
                                                                              printable(self->presented_name_))));
          return;
        }
        self->on_ready();
      });
}

void Connection::on_ready() {
  if (closed_) return;
  ready_ = true;
  read_more();
  write_next();
}

void Connection::read_more() {
  auto handler = [self = shared_from_this()](error_code ec, std::size_t bytes) {
    if (self->closed_) return;
    if (ec) {
      self->close(ec == asio::error::eof ? "peer closed the connection" : ec.message());
      return;
    }
    self->on_read(bytes);
  };
  if (tls_) {
    stream_.async_read_some(asio::buffer(read_buffer_), std::move(handler));
  } else {
    stream_.next_layer().async_read_some(asio::buffer(read_buffer_), std::move(handler));
  }
}

void Connection::on_read(std::size_t bytes) {
  decoder_.feed(read_buffer_.data(), bytes);
  proto::Envelope message;
  std::string error;
  while (!closed_) {
    switch (decoder_.next(message, error)) {
      case framing::FrameDecoder::Status::NeedMore:
        read_more();
        return;
      case framing::FrameDecoder::Status::Error:
        close(error);
        return;
      case framing::FrameDecoder::Status::Frame:
        on_message_(message);
        break;
    }
  }
}

void Connection::send(const proto::Envelope& message) {
  if (closed_) return;
  std::string frame;
  try {
    frame = framing::encode(message, limits_.max_frame);
  } catch (const std::length_error& e) {
    // A message we cannot frame is our bug, not the peer's; say so and keep the connection.
    spdlog::error("not sending to {}: {}", remote_, e.what());
    return;
  }
  queued_bytes_ += frame.size();
  write_queue_.push_back(std::move(frame));
  last_send_ = std::chrono::steady_clock::now();
  if (queued_bytes_ > limits_.max_queued_bytes) {
    close(fmt::format("peer is not reading: {} bytes queued", queued_bytes_));
    return;
  }
  write_next();
}

void Connection::set_max_frame(std::uint32_t max_frame) {
  limits_.max_frame = max_frame;
  decoder_.set_max_frame(max_frame);
}

void Connection::write_next() {
  if (!ready_ || writing_ || closed_ || write_queue_.empty()) return;
  writing_ = true;
  auto handler = [self = shared_from_this()](error_code ec, std::size_t) {
    self->writing_ = false;
    if (self->closed_) {
      self->write_queue_.clear();  // close() kept the buffer this write was reading
      return;
    }
    if (ec) {
      self->close(fmt::format("write failed: {}", ec.message()));
      return;
    }
    self->queued_bytes_ -= self->write_queue_.front().size();
    self->write_queue_.pop_front();
    self->write_next();
  };
  if (tls_) {
    asio::async_write(stream_, asio::buffer(write_queue_.front()), std::move(handler));
  } else {
    asio::async_write(stream_.next_layer(), asio::buffer(write_queue_.front()), std::move(handler));
  }
}

void Connection::close(const std::string& reason) {
  if (closed_) return;
  // The close handler may drop the owner's reference; stay alive until we return.
  auto self = shared_from_this();
  closed_ = true;
  handshake_timer_.cancel();
  error_code ec;
  stream_.lowest_layer().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  stream_.lowest_layer().close(ec);
  // A write in flight still reads the front buffer (a TLS write encrypts it piece by piece, after
  // completions already queued); it is freed when that write's handler runs.
  if (writing_) {
    write_queue_.erase(std::next(write_queue_.begin()), write_queue_.end());
  } else {
    write_queue_.clear();
  }
  queued_bytes_ = 0;
  // The handler runs later, never inside send() or close(): callers may hold their own locks.
  auto on_close = std::move(on_close_);
  on_message_ = nullptr;
  if (on_close) asio::post(stream_.get_executor(), [self, on_close, reason] { on_close(reason); });
}

std::optional<std::string> Connection::peer_common_name() {
  if (!tls_) return std::nullopt;
  return tusk::peer_common_name(stream_.native_handle());
}

std::vector<std::string> Connection::peer_dns_names() {
  if (!tls_) return {};
  return tusk::peer_dns_names(stream_.native_handle());
}

}  // namespace tusk
