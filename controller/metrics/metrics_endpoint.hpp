// The HTTP side of `run --metrics-listen`: serves GET /metrics in Prometheus's text format from
// the moment it is built until it is destroyed. Plain HTTP, as Prometheus scrapes by default, bound
// to a management address; optionally HTTP basic authentication (the password crosses in the clear
// unless TLS is on), and HTTPS with mutual TLS: the controller's own certificate, and only a
// scraper whose certificate the run's CA signed gets an answer (Prometheus's tls_config).
//
// What a peer cannot do to it: the page is rendered at most once a second however many scrape
// (MetricsPage), and every scrape of that second shares its text; at most 256 connections are
// open, 64 of them kept for scrapers that authenticated, and at most 32 from one address; a
// connection that has not finished its TLS handshake or sent its request within 2 s is closed, so
// idle or slow clients, from one address or many, cannot hold the server or keep a scraper out.
//
// Threads: built, lingered on and destroyed on the caller's thread; connections are served on one
// thread of the endpoint's own, and a scrape's rendering runs there.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/endpoint.hpp"
#include "common/tls.hpp"
#include "controller/metrics/live_metrics.hpp"

namespace tusk {

// How /metrics is protected; empty: no authentication.
struct MetricsSecurity {
  std::string basic_auth;       // a file whose first line is "user:password" (HTTP basic authentication)
  std::optional<TlsFiles> tls;  // HTTPS: this side's certificate and key, and the CA scrapers' certificates need
};

class MetricsEndpoint {
 public:
  // Listens on `listen` (an IP address and a port; port 0 picks one). Throws std::runtime_error
  // naming the address and why (not an address, in use, not this host's), or the file that cannot
  // be read or used, before serving anything.
  MetricsEndpoint(const HostPort& listen, std::shared_ptr<LiveMetrics> metrics, const MetricsSecurity& security = {});
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  std::uint16_t port() const;
  // Pages rendered so far: one per second at most, whatever the scrapers do.
  std::uint64_t renders() const;

  // Keeps serving for `duration` (the final values, for one more scrape or two), or until SIGINT
  // or SIGTERM; the signals' previous handlers are back when it returns.
  void linger(std::chrono::nanoseconds duration) const;

 private:
  struct Server;
  std::unique_ptr<Server> server_;
};

}  // namespace tusk
