#include "controller/metrics/metrics_endpoint.hpp"

#include <fmt/format.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <csignal>
#include <stdexcept>
#include <thread>
#include <vector>

namespace tusk {

namespace {

// The Exposer holds collectables by weak_ptr; this one lives as long as the endpoint.
class LiveMetricsCollectable : public prometheus::Collectable {
 public:
  explicit LiveMetricsCollectable(std::shared_ptr<LiveMetrics> metrics) : metrics_(std::move(metrics)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    // An exception would end the server's thread; a scrape that fails says so and returns nothing.
    try {
      return metrics_->collect();
    } catch (const std::exception& e) {
      spdlog::warn("metrics: a scrape failed: {}", e.what());
      return {};
    }
  }

 private:
  std::shared_ptr<LiveMetrics> metrics_;
};

// Binds `listen` once with our own socket: civetweb only says "problem binding to port", and a
// usage error should say which (in use, not an address of this host).
boost::asio::ip::address check_can_listen(const HostPort& listen) {
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(listen.host, ec);
  if (ec) throw std::runtime_error(fmt::format("'{}' is not an IP address", listen.host));
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor probe(io);
  const boost::asio::ip::tcp::endpoint endpoint(address, listen.port);
  probe.open(endpoint.protocol(), ec);
  // The server sets SO_REUSEADDR too: a port in TIME_WAIT is fine, one someone listens on is not.
  if (!ec) probe.set_option(boost::asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) probe.bind(endpoint, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot listen on {}:{}: {}", listen.host, listen.port, ec.message()));
  return address;
}

std::atomic<bool> g_stop_lingering{false};

extern "C" void on_linger_signal(int) {
  g_stop_lingering = true;
}

}  // namespace

MetricsEndpoint::MetricsEndpoint(const HostPort& listen, std::shared_ptr<LiveMetrics> metrics)
    : collectable_(std::make_shared<LiveMetricsCollectable>(std::move(metrics))) {
  const auto address = check_can_listen(listen);
  const auto with_port = [&](std::uint16_t port) {
    return address.is_v6() ? fmt::format("[{}]:{}", address.to_string(), port)
                           : fmt::format("{}:{}", address.to_string(), port);
  };
  // Each connection holds a server thread while it lasts: with two, four clients that connect and
  // send nothing kept every scrape out. Eight threads, and a client that has not sent its request
  // within 2 s is dropped, so a few slow or idle clients cannot starve a
  // scraper that keeps to Prometheus's own 10 s timeout.
  std::vector<std::string> options{"listening_ports", with_port(listen.port), "num_threads", "8",
                                   "request_timeout_ms", "2000"};
  if (address.is_unspecified()) {
    spdlog::warn("metrics: {} is every address of this host: /metrics is plain HTTP without authentication, "
                 "so anyone who reaches this host reads it; bind it to a management address",
                 listen.host);
  }
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(std::move(options));
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("cannot serve metrics on {}: {}", with_port(listen.port), e.what()));
  }
  exposer_->RegisterCollectable(collectable_);
  const auto ports = exposer_->GetListeningPorts();
  port_ = ports.empty() ? listen.port : static_cast<std::uint16_t>(ports.front());
  spdlog::info("metrics: serving Prometheus metrics on http://{}/metrics", with_port(port_));
}

MetricsEndpoint::~MetricsEndpoint() = default;

void MetricsEndpoint::linger(std::chrono::nanoseconds duration) const {
  if (duration <= std::chrono::nanoseconds::zero()) return;
  spdlog::info("metrics: serving the final values for {:.1f} s more (Ctrl-C ends it)",
               std::chrono::duration<double>(duration).count());
  g_stop_lingering = false;
  auto previous_int = std::signal(SIGINT, on_linger_signal);
  auto previous_term = std::signal(SIGTERM, on_linger_signal);
  const auto until = std::chrono::steady_clock::now() + duration;
  while (!g_stop_lingering && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
}

}  // namespace tusk
