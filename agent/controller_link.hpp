// The agent's connection to its controller: dials, runs the TLS handshake, and after any loss
// dials again with backoff, for as long as the agent runs.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/backoff.hpp"
#include "common/connection.hpp"
#include "common/endpoint.hpp"

namespace tusk {

class ControllerLink {
 public:
  struct Handlers {
    std::function<void()> on_connected;  // TCP is up; frames sent now go after the TLS handshake
    std::function<void(proto::Envelope&)> on_message;
    std::function<void(const std::string& reason)> on_disconnected;
  };

  // `tls` null means plaintext (--insecure). It must outlive the link.
  // `send_queue_bytes`: what may wait to be written before the connection counts as stuck.
  ControllerLink(boost::asio::io_context& io, HostPort controller, boost::asio::ssl::context* tls,
                 std::size_t send_queue_bytes, Handlers handlers);

  void start();
  // Sends if a connection is open; otherwise the frame is dropped (records live in the outbox).
  void send(const proto::Envelope& message);
  // Drops the current connection (if any); a new one is dialled after backoff.
  void drop(const std::string& reason);
  void shutdown();
  bool connected() const { return connection_ && connection_->is_open(); }
  bool sent_within(std::chrono::steady_clock::duration period) const {
    return connection_ && connection_->sent_within(period);
  }
  // Resets the backoffs once a session is established, so the next loss redials quickly.
  void session_established() {
    unanswered_backoff_.reset();
    refused_backoff_.reset();
    in_session_ = true;
    last_failure_.clear();
  }

 private:
  void dial();
  void schedule_dial(Backoff& backoff);
  // A dial that never became a session (unreachable, TLS refused, closed before the hello was
  // answered): a warning when the reason is new, so a wrong certificate is seen at once and a
  // controller that is down does not fill the log every retry.
  void attempt_failed(const std::string& reason);

  boost::asio::io_context& io_;
  HostPort controller_;
  boost::asio::ssl::context* tls_;
  Connection::Limits limits_;
  Handlers handlers_;
  boost::asio::ip::tcp::resolver resolver_;
  boost::asio::steady_timer redial_timer_;
  // Two paces of redial. A dial nobody answers (no controller yet, or its run is over) costs a
  // SYN and a reset, and a run's controller waits for its last agent's next dial: at the 5 s
  // ceiling, agents idle between runs kept each run waiting up to 6 s, at 1 s it is 1.2 s. A dial
  // that reached a controller but ended before a session (TLS refused, closed early) costs the
  // controller a handshake, and a name it cannot resolve costs a DNS server a query: those back
  // off to 5 s.
  Backoff unanswered_backoff_{std::chrono::milliseconds(100), std::chrono::seconds(1)};
  Backoff refused_backoff_{std::chrono::milliseconds(100), std::chrono::seconds(5)};
  std::shared_ptr<Connection> connection_;
  std::optional<boost::asio::ip::tcp::socket> dialling_;
  bool stopped_ = false;
  bool in_session_ = false;  // the current connection's hello was answered
  std::string last_failure_;
};

}  // namespace tusk
