#include "tests/e2e/cutting_proxy.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include <array>

namespace tusk::testing {
namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

struct CuttingProxy::Pair : std::enable_shared_from_this<Pair> {
  explicit Pair(asio::io_context& io) : client(io), server(io) {}
  tcp::socket client;
  tcp::socket server;
  std::array<char, 16384> up{};
  std::array<char, 16384> down{};

  void relay(tcp::socket& from, tcp::socket& to, std::array<char, 16384>& buffer) {
    from.async_read_some(asio::buffer(buffer),
                         [self = shared_from_this(), &from, &to, &buffer](error_code ec, std::size_t n) {
                           if (ec) {
                             self->close();
                             return;
                           }
                           asio::async_write(to, asio::buffer(buffer.data(), n),
                                             [self, &from, &to, &buffer](error_code write_ec, std::size_t) {
                                               if (write_ec) {
                                                 self->close();
                                                 return;
                                               }
                                               self->relay(from, to, buffer);
                                             });
                         });
  }
  void close() {
    error_code ec;
    client.close(ec);
    server.close(ec);
  }
};

CuttingProxy::CuttingProxy(int listen_port, int target_port)
    : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(listen_port))),
      target_port_(target_port) {
  accept_next();
  thread_ = std::thread([this] { io_.run(); });
}

CuttingProxy::~CuttingProxy() {
  asio::post(io_, [this] {
    error_code ec;
    acceptor_.close(ec);
    close_all();
    io_.stop();
  });
  thread_.join();
}

void CuttingProxy::accept_next() {
  auto pair = std::make_shared<Pair>(io_);
  acceptor_.async_accept(pair->client, [this, pair](error_code ec) {
    if (ec) return;
    if (refusing_) {
      pair->close();
    } else {
      error_code connect_ec;
      pair->server.connect(
          tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(target_port_)), connect_ec);
      if (connect_ec) {
        pair->close();
      } else {
        {
          std::lock_guard lock(mutex_);
          pairs_.push_back(pair);
        }
        pair->relay(pair->client, pair->server, pair->up);
        pair->relay(pair->server, pair->client, pair->down);
      }
    }
    accept_next();
  });
}

void CuttingProxy::cut() {
  refusing_ = true;
  asio::post(io_, [this] { close_all(); });
}

void CuttingProxy::close_all() {
  std::lock_guard lock(mutex_);
  for (auto& weak : pairs_) {
    if (auto pair = weak.lock(); pair && pair->client.is_open()) {
      pair->close();
      ++connections_cut_;
    }
  }
  pairs_.clear();
}

void CuttingProxy::restore() {
  refusing_ = false;
}

}  // namespace tusk::testing
