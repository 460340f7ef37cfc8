#include "agent/controller_link.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/connect.hpp>

namespace tusk {
namespace asio = boost::asio;
using boost::system::error_code;

ControllerLink::ControllerLink(asio::io_context& io, HostPort controller, asio::ssl::context* tls,
                               std::size_t send_queue_bytes, Handlers handlers)
    : io_(io),
      controller_(std::move(controller)),
      tls_(tls),
      limits_{framing::kDefaultMaxFrame, send_queue_bytes, std::chrono::seconds(10)},
      handlers_(std::move(handlers)),
      resolver_(io),
      redial_timer_(io) {}

void ControllerLink::start() {
  dial();
}

void ControllerLink::dial() {
  if (stopped_) return;
  resolver_.async_resolve(
      controller_.host, std::to_string(controller_.port),
      [this](error_code ec, asio::ip::tcp::resolver::results_type results) {
        if (stopped_) return;
        if (ec) {
          spdlog::warn("cannot resolve controller {}: {}", controller_.host, ec.message());
          schedule_dial(refused_backoff_);
          return;
        }
        dialling_.emplace(io_);
        asio::async_connect(*dialling_, results, [this](error_code connect_ec, const asio::ip::tcp::endpoint&) {
          if (stopped_) return;
          if (connect_ec) {
            attempt_failed(fmt::format("not reachable: {}", connect_ec.message()));
            dialling_.reset();
            schedule_dial(unanswered_backoff_);
            return;
          }
          auto connection = Connection::create(std::move(*dialling_), tls_, limits_);
          dialling_.reset();
          connection_ = connection;
          in_session_ = false;
          std::weak_ptr<Connection> weak = connection;
          connection->start_as_client(
              controller_.host, [this](proto::Envelope& message) { handlers_.on_message(message); },
              [this, weak](const std::string& reason) {
                if (connection_ == weak.lock()) connection_.reset();
                const bool was_in_session = in_session_;
                if (!was_in_session) attempt_failed(reason);
                in_session_ = false;
                handlers_.on_disconnected(reason);
                // A lost session redials at once (the backoffs were reset when it began).
                schedule_dial(was_in_session ? unanswered_backoff_ : refused_backoff_);
              });
          handlers_.on_connected();
        });
      });
}

namespace {

// What a TLS alert usually means here, so that a failed handshake says what to check.
std::string handshake_hint(const std::string& reason) {
  if (reason.find("unsupported certificate") != std::string::npos) {
    return " (a certificate lacks the key usage its side needs: extendedKeyUsage serverAuth on the controller's, "
           "clientAuth on this agent's)";
  }
  if (reason.find("certificate verify failed") != std::string::npos) {
    return " (the controller's certificate is not signed by --ca's CA, or does not name the address dialled)";
  }
  if (reason.find("unknown ca") != std::string::npos || reason.find("bad certificate") != std::string::npos) {
    return " (the controller does not trust this agent's certificate: not signed by its CA, or another agent's name)";
  }
  return "";
}

}  // namespace

void ControllerLink::attempt_failed(const std::string& reason) {
  if (reason == last_failure_) {
    spdlog::debug("controller {}:{}: {} (again)", controller_.host, controller_.port, reason);
    return;
  }
  last_failure_ = reason;
  spdlog::warn("cannot register with controller {}:{}: {}{}; retrying", controller_.host, controller_.port, reason,
               handshake_hint(reason));
}

void ControllerLink::schedule_dial(Backoff& backoff) {
  if (stopped_) return;
  const auto delay = backoff.next_delay();
  redial_timer_.expires_after(delay);
  redial_timer_.async_wait([this](error_code ec) {
    if (!ec) dial();
  });
}

void ControllerLink::send(const proto::Envelope& message) {
  if (connection_) connection_->send(message);
}

void ControllerLink::drop(const std::string& reason) {
  if (connection_) connection_->close(reason);
}

void ControllerLink::shutdown() {
  stopped_ = true;
  redial_timer_.cancel();
  resolver_.cancel();
  if (dialling_) {
    error_code ec;
    dialling_->close(ec);
  }
  if (connection_) connection_->close("agent shutting down");
}

}  // namespace tusk
