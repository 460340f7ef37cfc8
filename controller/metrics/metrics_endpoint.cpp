#include "controller/metrics/metrics_endpoint.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

#include "common/printable.hpp"
#include "controller/metrics/metrics_page.hpp"

namespace tusk {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

// Connections are cheap here (a socket and a small buffer each; every scrape of a second shares one
// page's text), so the limit is generous. A connection that has not yet been answered a scrape
// (its TLS handshake, its first request, a wrong password) is a newcomer: when the limit is
// reached, a new connection closes the oldest newcomer, so clients that connect and send nothing,
// however many and however fast they come back, cannot keep a scraper out, which sends its request
// at once. Connections answered a scrape stay, up to kMaxScrapers; past that a scrape is answered
// and its connection closed.
constexpr std::size_t kMaxConnections = 256;
constexpr std::size_t kMaxScrapers = 64;
// A connection's TLS handshake, and each request on it, must be done within this; Prometheus's
// own scrape timeout is 10 s, so a scraper that keeps to it is never cut off.
constexpr auto kRequestTimeout = 2s;
constexpr auto kWriteTimeout = 10s;
constexpr auto kPageFreshFor = 1s;
// LiveMetrics keeps the streams' series within 16 MiB; the rest of the page is a few KiB.
constexpr std::size_t kMaxPageBytes = 24 * 1024 * 1024;
constexpr std::size_t kMaxRequestHeaderBytes = 8 * 1024;
// Handshakes that fail are logged as warnings up to this many, then at debug level: a scanner
// must not flood the run's log.
constexpr std::uint64_t kHandshakeWarnings = 10;

struct Credentials {
  std::string user, password;
};

// "user:password" from the first line of `path`; throws naming the file.
Credentials read_credentials(const std::string& path) {
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
bool equal_in_constant_time(std::string_view a, std::string_view b) {
  unsigned char difference = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size(); ++i)
    difference |= static_cast<unsigned char>(a[i] ^ b[i % std::max<std::size_t>(b.size(), 1)]);
  return difference == 0;
}

// An "Authorization: Basic <base64 of user:password>" header that names these credentials.
bool authorised(std::string_view header, const Credentials& expected) {
  constexpr std::string_view kScheme = "Basic ";
  if (header.size() <= kScheme.size() || header.size() > 1024 || !header.starts_with(kScheme)) return false;
  const std::string_view encoded = header.substr(kScheme.size());
  if (encoded.size() % 4 != 0) return false;
  std::string decoded(encoded.size() / 4 * 3, '\0');
  const int length =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(decoded.data()),
                      reinterpret_cast<const unsigned char*>(encoded.data()), static_cast<int>(encoded.size()));
  if (length < 0) return false;
  // EVP_DecodeBlock counts the padding's zero bytes.
  const auto padding = static_cast<std::size_t>(
      std::count(encoded.end() - std::min<std::size_t>(2, encoded.size()), encoded.end(), '='));
  decoded.resize(static_cast<std::size_t>(length) - std::min<std::size_t>(padding, static_cast<std::size_t>(length)));
  const auto colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  return equal_in_constant_time(std::string_view(decoded).substr(0, colon), expected.user) &
         equal_in_constant_time(std::string_view(decoded).substr(colon + 1), expected.password);
}

std::atomic<bool> g_stop_lingering{false};

extern "C" void on_linger_signal(int) {
  g_stop_lingering = true;
}

// A connection not yet answered a scrape, which a newer one may close.
class Newcomer {
 public:
  virtual ~Newcomer() = default;
  virtual void close_for_newer() = 0;
};

// What every connection shares; touched only on the server's one io thread.
struct Shared {
  Shared(MetricsPage::Render render, std::optional<Credentials> expected)
      : page(std::move(render), kPageFreshFor, kMaxPageBytes), credentials(std::move(expected)) {}
  MetricsPage page;
  const std::optional<Credentials> credentials;
  std::atomic<std::size_t> connections{0};
  std::size_t scrapers = 0;
  std::list<std::weak_ptr<Newcomer>> newcomers;  // oldest first
  std::uint64_t closed_for_newer = 0;
  std::atomic<std::uint64_t> failed_handshakes{0};
};

// One connection: (a TLS handshake,) then requests until the client closes, goes quiet for
// kRequestTimeout, or sends something that is not a request.
template <typename Stream>
class ScrapeConnection : public Newcomer, public std::enable_shared_from_this<ScrapeConnection<Stream>> {
 public:
  ScrapeConnection(Stream stream, std::shared_ptr<Shared> shared, std::string peer)
      : stream_(std::move(stream)), shared_(std::move(shared)), peer_(std::move(peer)) {}
  ~ScrapeConnection() override {
    --shared_->connections;
    if (newcomer_) shared_->newcomers.erase(*newcomer_);
    if (scraper_) --shared_->scrapers;
  }
  ScrapeConnection(const ScrapeConnection&) = delete;
  ScrapeConnection& operator=(const ScrapeConnection&) = delete;

  void close_for_newer() override {
    if (newcomer_) {
      shared_->newcomers.erase(*newcomer_);
      newcomer_.reset();
    }
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().close(ignored);
  }

  void start() {
    newcomer_ = shared_->newcomers.insert(shared_->newcomers.end(), this->weak_from_this());
    if constexpr (std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>) {
      beast::get_lowest_layer(stream_).expires_after(kRequestTimeout);
      stream_.async_handshake(asio::ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
        if (!ec) return self->read();
        const auto failed = ++self->shared_->failed_handshakes;
        const auto level = failed <= kHandshakeWarnings ? spdlog::level::warn : spdlog::level::debug;
        spdlog::log(level,
                    "metrics: TLS handshake with {} failed: {} (a scraper needs a certificate the run's CA signed){}",
                    self->peer_, printable(ec.message()),
                    failed == kHandshakeWarnings ? "; further failures are logged at debug level" : "");
      });
    } else {
      read();
    }
  }

 private:
  void read() {
    parser_.emplace();
    parser_->header_limit(kMaxRequestHeaderBytes);
    parser_->body_limit(kMaxRequestHeaderBytes);
    beast::get_lowest_layer(stream_).expires_after(kRequestTimeout);
    http::async_read(stream_, buffer_, *parser_, [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec) self->answer(self->parser_->get());
      // Otherwise the client closed, went quiet or sent no request: the connection ends here.
    });
  }

  void answer(const http::request<http::string_body>& request) {
    response_ = {};
    response_.version(request.version());
    response_.keep_alive(request.keep_alive());
    response_.set(http::field::server, "tusk-controller");
    const std::string_view target(request.target().data(), request.target().size());
    const std::string_view path = target.substr(0, target.find('?'));
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      respond_with(http::status::method_not_allowed, "only GET /metrics is served here\n");
      response_.set(http::field::allow, "GET, HEAD");
    } else if (path != "/metrics") {
      respond_with(http::status::not_found, "Tusk serves its metrics at /metrics\n");
    } else if (shared_->credentials && !authorised(std::string_view(request[http::field::authorization].data(),
                                                                    request[http::field::authorization].size()),
                                                   *shared_->credentials)) {
      respond_with(http::status::unauthorized, "this /metrics needs a user and password\n");
      response_.set(http::field::www_authenticate, "Basic realm=\"tusk\"");
    } else {
      become_scraper();
      page_ = shared_->page.get();
      response_.result(http::status::ok);
      response_.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      response_.body() = http::span_body<const char>::value_type(page_->data(), page_->size());
    }
    response_.prepare_payload();
    if (request.method() == http::verb::head) response_.body() = {};
    beast::get_lowest_layer(stream_).expires_after(kWriteTimeout);
    http::async_write(stream_, response_, [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
      self->page_.reset();
      if (!ec && self->response_.keep_alive()) self->read();
    });
  }

  // Answered a scrape: no newer connection closes it, and it stays open while there is room.
  void become_scraper() {
    if (newcomer_) {
      shared_->newcomers.erase(*newcomer_);
      newcomer_.reset();
    }
    if (!scraper_ && shared_->scrapers < kMaxScrapers) {
      scraper_ = true;
      ++shared_->scrapers;
    }
    if (!scraper_) response_.keep_alive(false);
  }

  void respond_with(http::status status, std::string text) {
    response_.result(status);
    response_.set(http::field::content_type, "text/plain; charset=utf-8");
    error_text_ = std::move(text);
    response_.body() = http::span_body<const char>::value_type(error_text_.data(), error_text_.size());
  }

  Stream stream_;
  std::shared_ptr<Shared> shared_;
  const std::string peer_;
  beast::flat_buffer buffer_{kMaxRequestHeaderBytes};
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::span_body<const char>> response_;
  std::shared_ptr<const std::string> page_;  // held while its text is written
  std::string error_text_;
  std::optional<std::list<std::weak_ptr<Newcomer>>::iterator> newcomer_;
  bool scraper_ = false;
};

std::string render_page(LiveMetrics& metrics) {
  // A scrape that fails says so in the log and gets an empty page; the server carries on.
  try {
    return prometheus::TextSerializer().Serialize(metrics.collect());
  } catch (const std::exception& e) {
    spdlog::warn("metrics: a scrape failed: {}", e.what());
    return {};
  }
}

}  // namespace

struct MetricsEndpoint::Server {
  // Declared first, so that it outlives the connections the io_context still holds when it goes.
  std::optional<asio::ssl::context> tls;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  std::shared_ptr<Shared> shared;
  std::uint16_t port = 0;
  std::thread thread;

  void accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) serve(std::move(socket));
      accept();
    });
  }

  // Closes the oldest connection not yet answered a scrape; false when there is none. Its count
  // is given back when its handler ends, a moment later: the new one is let in at once.
  bool close_oldest_newcomer() {
    while (!shared->newcomers.empty()) {
      const std::shared_ptr<Newcomer> oldest = shared->newcomers.front().lock();
      if (!oldest) {
        shared->newcomers.pop_front();
        continue;
      }
      oldest->close_for_newer();  // takes itself off the list
      if (++shared->closed_for_newer % 1000 == 1) {
        spdlog::debug("metrics: {} connections are open: closed the oldest that asked for nothing ({} so far)",
                      kMaxConnections, shared->closed_for_newer);
      }
      return true;
    }
    return false;
  }

  void serve(tcp::socket socket) {
    beast::error_code ec;
    const auto remote = socket.remote_endpoint(ec);
    const std::string peer = ec ? "?" : fmt::format("{}:{}", remote.address().to_string(), remote.port());
    if (shared->connections.load() >= kMaxConnections && !close_oldest_newcomer()) {
      spdlog::debug("metrics: {} connections are open and all were answered: {} is closed unanswered", kMaxConnections,
                    peer);
      socket.close(ec);
      return;
    }
    ++shared->connections;
    if (tls) {
      std::make_shared<ScrapeConnection<beast::ssl_stream<beast::tcp_stream>>>(
          beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(socket)), *tls), shared, peer)
          ->start();
    } else {
      std::make_shared<ScrapeConnection<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), shared, peer)
          ->start();
    }
  }
};

MetricsEndpoint::MetricsEndpoint(const HostPort& listen, std::shared_ptr<LiveMetrics> metrics,
                                 const MetricsSecurity& security)
    : server_(std::make_unique<Server>()) {
  Server& server = *server_;
  beast::error_code ec;
  const auto address = asio::ip::make_address(listen.host, ec);
  if (ec) throw std::runtime_error(fmt::format("'{}' is not an IP address", listen.host));
  std::optional<Credentials> credentials;
  if (!security.basic_auth.empty()) credentials = read_credentials(security.basic_auth);
  if (security.tls) server.tls.emplace(make_tls_context(*security.tls, TlsRole::Controller));
  const tcp::endpoint endpoint(address, listen.port);
  server.acceptor.open(endpoint.protocol(), ec);
  // A port in TIME_WAIT is fine, one someone listens on is not.
  if (!ec) server.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) server.acceptor.bind(endpoint, ec);
  if (!ec) server.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot listen on {}:{}: {}", listen.host, listen.port, ec.message()));
  server.port = server.acceptor.local_endpoint().port();
  server.shared = std::make_shared<Shared>([metrics] { return render_page(*metrics); }, std::move(credentials));

  const std::string where = address.is_v6() ? fmt::format("[{}]:{}", address.to_string(), server.port)
                                            : fmt::format("{}:{}", address.to_string(), server.port);
  if (address.is_unspecified() && !server.tls) {
    spdlog::warn(
        "metrics: {} is every address of this host: /metrics is plain HTTP{}, so anyone who reaches "
        "this host {}; bind it to a management address, or serve it over mutual TLS (--metrics-tls)",
        listen.host, server.shared->credentials ? " with the password in the clear" : " without authentication",
        server.shared->credentials ? "can read the password off the wire" : "reads it");
  }
  server.accept();
  server.thread = std::thread([&server] { server.io.run(); });
  spdlog::info("metrics: serving Prometheus metrics on {}://{}/metrics{}{}", server.tls ? "https" : "http", where,
               server.tls ? " (mutual TLS: scrapers need a certificate the run's CA signed)" : "",
               server.shared->credentials ? " (basic authentication)" : "");
}

MetricsEndpoint::~MetricsEndpoint() {
  server_->io.stop();
  if (server_->thread.joinable()) server_->thread.join();
}

std::uint16_t MetricsEndpoint::port() const {
  return server_->port;
}

std::uint64_t MetricsEndpoint::renders() const {
  return server_->shared->page.renders();
}

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
