// The HTTP side of `run --metrics-listen`: serves GET /metrics in Prometheus's text format from
// the moment it is built until it is destroyed, each scrape a fresh LiveMetrics::collect().
// Plain HTTP without authentication, as Prometheus scrapes by default: bind it to a management
// address. prometheus-cpp's Exposer (civetweb) owns the socket and the two threads that answer.
//
// Threads: built, lingered on and destroyed on the caller's thread; scrapes run on the server's.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "common/endpoint.hpp"
#include "controller/metrics/live_metrics.hpp"

namespace prometheus {
class Collectable;
class Exposer;
}  // namespace prometheus

namespace tusk {

class MetricsEndpoint {
 public:
  // Listens on `listen` (an IP address and a port; port 0 picks one). Throws std::runtime_error
  // naming the address and why (not an address, in use, not this host's) before serving anything.
  MetricsEndpoint(const HostPort& listen, std::shared_ptr<LiveMetrics> metrics);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  std::uint16_t port() const { return port_; }

  // Keeps serving for `duration` (the final values, for one more scrape or two), or until SIGINT
  // or SIGTERM; the signals' previous handlers are back when it returns.
  void linger(std::chrono::nanoseconds duration) const;

 private:
  std::shared_ptr<prometheus::Collectable> collectable_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::uint16_t port_ = 0;
};

}  // namespace tusk
