#include "controller/metrics/metrics_endpoint.hpp"

#include <fmt/format.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <optional>
#include <utility>
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

// "user:password" from the first line of `path`; throws naming the file.
std::pair<std::string, std::string> read_credentials(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  std::string line;
  std::getline(file, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const auto colon = line.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == line.size()) {
    throw std::runtime_error(fmt::format("'{}': its first line is not user:password", path));
  }
  return {line.substr(0, colon), line.substr(colon + 1)};
}

// Whether a equals b, in time that depends on their lengths only, not on where they differ.
bool equal_in_constant_time(const std::string& a, const std::string& b) {
  unsigned char difference = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i % std::max<std::size_t>(b.size(), 1)]);
  return difference == 0;
}

std::atomic<bool> g_stop_lingering{false};

extern "C" void on_linger_signal(int) {
  g_stop_lingering = true;
}

}  // namespace

MetricsEndpoint::MetricsEndpoint(const HostPort& listen, std::shared_ptr<LiveMetrics> metrics,
                                 const MetricsSecurity& security)
    : collectable_(std::make_shared<LiveMetricsCollectable>(std::move(metrics))) {
  const auto address = check_can_listen(listen);
  std::optional<std::pair<std::string, std::string>> credentials;
  if (!security.basic_auth.empty()) credentials = read_credentials(security.basic_auth);
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
    spdlog::warn("metrics: {} is every address of this host: /metrics is plain HTTP{}, so anyone who reaches "
                 "this host {}; bind it to a management address",
                 listen.host, credentials ? " with the password in the clear" : " without authentication",
                 credentials ? "can read the password off the wire" : "reads it");
  }
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(std::move(options));
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("cannot serve metrics on {}: {}", with_port(listen.port), e.what()));
  }
  exposer_->RegisterCollectable(collectable_);
  if (credentials) {
    exposer_->RegisterAuth(
        [expected = *credentials](const std::string& user, const std::string& password) {
          return equal_in_constant_time(user, expected.first) & equal_in_constant_time(password, expected.second);
        },
        "tusk");
  }
  const auto ports = exposer_->GetListeningPorts();
  port_ = ports.empty() ? listen.port : static_cast<std::uint16_t>(ports.front());
  spdlog::info("metrics: serving Prometheus metrics on http://{}/metrics{}", with_port(port_),
               credentials ? " (basic authentication)" : "");
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
