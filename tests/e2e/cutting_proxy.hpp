// A TCP relay on 127.0.0.1 that a test can cut: cut() drops every relayed connection at once and
// refuses new ones until restore(). Used to break an agent's control connection mid-run for real,
// at the socket level, without touching either process.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tusk::testing {

class CuttingProxy {
 public:
  CuttingProxy(int listen_port, int target_port);
  ~CuttingProxy();

  void cut();
  void restore();
  int connections_cut() const { return connections_cut_; }

 private:
  struct Pair;
  void accept_next();
  void close_all();

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  int target_port_;
  std::mutex mutex_;
  std::vector<std::weak_ptr<Pair>> pairs_;
  std::atomic<bool> refusing_{false};
  std::atomic<int> connections_cut_{0};
  std::thread thread_;
};

}  // namespace tusk::testing
