// The HTTP side of `run --metrics-listen`: serves GET /metrics in Prometheus's text format from
// the moment it is built until it is destroyed, each scrape a fresh LiveMetrics::collect().
// Plain HTTP, as Prometheus scrapes by default: bind it to a management address; HTTP basic
// authentication keeps out whoever lacks the password (sent in the clear). No TLS: Debian 12's
// civetweb crashes (a null SSL function under OpenSSL 3) at the first TLS handshake, so HTTPS
// needs a TLS-terminating proxy in front. prometheus-cpp's Exposer (civetweb) owns the socket and
// the threads that answer.
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

// How /metrics is protected; empty: no authentication.
struct MetricsSecurity {
  std::string basic_auth;  // a file whose first line is "user:password" (HTTP basic authentication)
};

class MetricsEndpoint {
 public:
  // Listens on `listen` (an IP address and a port; port 0 picks one). Throws std::runtime_error
  // naming the address and why (not an address, in use, not this host's), or the file that cannot
  // be read, before serving anything.
  MetricsEndpoint(const HostPort& listen, std::shared_ptr<LiveMetrics> metrics, const MetricsSecurity& security = {});
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
