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
#include <map>
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
// page's text), so the limits are generous. A connection that has not yet authenticated is a
// newcomer: authenticated is a valid password with --metrics-auth, else a finished mutual-TLS
// handshake (a certificate the run's CA signed) with --metrics-tls, else, with neither, a scrape
// answered. Newcomers, however many connect and however fast they come back, cannot keep a
// scraper out:
// - kMaxScrapers of kMaxConnections are kept for authenticated connections, and one is never closed
//   to make room for a newcomer; up to kMaxScrapers stay open for the next scrape (past that, each
//   is answered as a newcomer and closed after its answer).
// - Newcomers have the rest. When they are full, a new connection closes the oldest newcomer of the
//   source that holds the most (of its newcomers, the oldest that has sent nothing, if any has not): clients that
//   connect and send nothing crowd out each other, and a scraper's one connection from an address of its own is closed
//   only when every source holds one (kMaxNewcomers sources at once), however long its handshake and request take to
//   come (a scraper far away, a server slowed by the flood). Closing the oldest newcomer of all closed a scraper whose
//   request came after that many newer connections.
// - One source (an IPv4 address; an IPv6 host's /64, which one host usually owns whole) holds at
//   most kMaxConnectionsPerSource, of either kind. Prometheus keeps one connection per target, a few
//   while it reloads, and a pair of them behind one NAT twice that: 32 is far beyond any scraper,
//   and one address cannot take more than an eighth of the table. A new connection from a source
//   at its limit closes that source's own oldest newcomer (again the oldest that has sent nothing
//   first), never another source's, so a flood from
//   one address churns only itself and a scraper sharing its address still gets its turn; where
//   all of the source's connections have authenticated, the new one is closed at once.
constexpr std::size_t kMaxConnections = 256;
constexpr std::size_t kMaxScrapers = 64;
constexpr std::size_t kMaxNewcomers = kMaxConnections - kMaxScrapers;
constexpr std::size_t kMaxConnectionsPerSource = 32;
// A connection's TLS handshake, and each request on it, must be done within this; Prometheus's
// own scrape timeout is 10 s, so a scraper that keeps to it is never cut off.
constexpr auto kRequestTimeout = 2s;
constexpr auto kWriteTimeout = 10s;
constexpr auto kPageFreshFor = 1s;
// LiveMetrics keeps the streams' series within 16 MiB; the rest of the page is a few KiB.
constexpr std::size_t kMaxPageBytes = 24 * 1024 * 1024;
constexpr std::size_t kMaxRequestHeaderBytes = 8 * 1024;
// Handshakes that fail are logged as warnings up to this many, then at debug level: a scanner
// must not flood the run's log. So are the first closings at a source's limit, then every 1000th
// at debug level, as the newcomers closed at theirs.
constexpr std::uint64_t kHandshakeWarnings = 10;
constexpr std::uint64_t kSourceLimitWarnings = 10;

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

// A connection not yet authenticated, which a newer one may close.
class Newcomer {
 public:
  virtual ~Newcomer() = default;
  virtual void close_for_newer() = 0;
  // Whether any of a request (or a TLS handshake) has come: read, or waiting to be read.
  virtual bool has_sent() = 0;
};

// A newcomer in its source's list: `arrival` orders newcomers of different sources. Each connection
// takes itself off in its destructor, so the pointer never dangles.
struct NewcomerEntry {
  std::uint64_t arrival;
  Newcomer* connection;
};

// The connections from one source (metrics_source_of).
struct MetricsSource {
  std::size_t open = 0;
  std::list<NewcomerEntry> newcomers;  // oldest first
};
using MetricsSources = std::map<asio::ip::address, MetricsSource>;

// Whom the per-source limit counts together: an IPv4 address (also as an IPv4-mapped IPv6 one),
// or an IPv6 address's /64.
asio::ip::address metrics_source_of(const asio::ip::address& address) {
  if (!address.is_v6()) return address;
  const auto v6 = address.to_v6();
  if (v6.is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, v6);
  auto bytes = v6.to_bytes();
  std::fill(bytes.begin() + 8, bytes.end(), 0);
  return asio::ip::address_v6(bytes);
}

// What every connection shares; touched only on the server's one io thread.
struct Shared {
  Shared(MetricsPage::Render render, std::optional<Credentials> expected)
      : page([this, render = std::move(render)] { return closings_page() + render(); }, kPageFreshFor, kMaxPageBytes),
        credentials(std::move(expected)) {}
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;

  // The limits' closings as series, first on the page so that a cut page keeps them. Rendered on
  // the io thread, as every scrape is.
  std::string closings_page() const {
    return fmt::format(
        "# HELP tusk_metrics_connections_closed_total Connections to /metrics closed at a limit: its source's "
        "{} (source), or {} not yet authenticated open (newcomers)\n"
        "# TYPE tusk_metrics_connections_closed_total counter\n"
        "tusk_metrics_connections_closed_total{{limit=\"source\"}} {}\n"
        "tusk_metrics_connections_closed_total{{limit=\"newcomers\"}} {}\n",
        kMaxConnectionsPerSource, kMaxNewcomers, closed_at_source_limit, closed_for_newer);
  }

  MetricsPage page;
  const std::optional<Credentials> credentials;
  MetricsSources sources;
  std::size_t newcomers = 0;  // across sources
  std::size_t scrapers = 0;   // authenticated, in the kept slots
  std::uint64_t arrivals = 0;
  std::uint64_t closed_for_newer = 0;
  std::uint64_t closed_at_source_limit = 0;
  std::atomic<std::uint64_t> failed_handshakes{0};
};

// One connection: (a TLS handshake,) then requests until the client closes, goes quiet for
// kRequestTimeout, or sends something that is not a request.
template <typename Stream>
class ScrapeConnection : public Newcomer, public std::enable_shared_from_this<ScrapeConnection<Stream>> {
 public:
  // Counts itself in `source` (which lives while it has connections) as a newcomer.
  ScrapeConnection(Stream stream, std::shared_ptr<Shared> shared, std::string peer, MetricsSources::iterator source)
      : stream_(std::move(stream)), shared_(std::move(shared)), peer_(std::move(peer)), source_(source) {
    ++source_->second.open;
    newcomer_ = source_->second.newcomers.insert(source_->second.newcomers.end(), {++shared_->arrivals, this});
    ++shared_->newcomers;
  }
  ~ScrapeConnection() override { leave(); }
  ScrapeConnection(const ScrapeConnection&) = delete;
  ScrapeConnection& operator=(const ScrapeConnection&) = delete;

  void close_for_newer() override {
    leave();
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().close(ignored);
  }

  bool has_sent() override {
    beast::error_code ignored;
    return buffer_.size() > 0 || beast::get_lowest_layer(stream_).socket().available(ignored) > 0;
  }

  void start() {
    if constexpr (std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>) {
      beast::get_lowest_layer(stream_).expires_after(kRequestTimeout);
      stream_.async_handshake(asio::ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
        if (self->left_) return;  // closed for a newer connection: not a failed handshake
        if (!ec) {
          // The certificate is the credential, unless a password is asked for too.
          if (!self->shared_->credentials) self->authenticate();
          return self->read();
        }
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
      if (!authenticate()) response_.keep_alive(false);
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

  // Authenticated: no newer connection closes it, and it stays open while a kept slot is free;
  // false when none is (it stays a newcomer, to be closed after its answer).
  bool authenticate() {
    if (!scraper_ && !left_ && shared_->scrapers < kMaxScrapers) {
      scraper_ = true;
      ++shared_->scrapers;
      stop_being_newcomer();
    }
    return scraper_;
  }

  void stop_being_newcomer() {
    if (!newcomer_) return;
    source_->second.newcomers.erase(*newcomer_);
    newcomer_.reset();
    --shared_->newcomers;
  }

  // Gives back what it counts, once: when a newer connection closes it, or when it ends.
  void leave() {
    if (left_) return;
    left_ = true;
    stop_being_newcomer();
    if (scraper_) --shared_->scrapers;
    scraper_ = false;
    if (--source_->second.open == 0) shared_->sources.erase(source_);
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
  const MetricsSources::iterator source_;
  std::optional<std::list<NewcomerEntry>::iterator> newcomer_;
  bool scraper_ = false;
  bool left_ = false;
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

  // Closes `source`'s oldest newcomer that has sent nothing, else its oldest; false when it has
  // none. What it counted is given back at once. A request that has come but is not yet read (the
  // server slowed by a flood) is a scraper's, not an idle client's: closing it by age closed a
  // scraper sharing a flood's address when 32 newer connections were taken before its request.
  static bool close_oldest_newcomer(MetricsSource& source) {
    if (source.newcomers.empty()) return false;
    const auto idle = std::find_if(source.newcomers.begin(), source.newcomers.end(),
                                   [](const NewcomerEntry& entry) { return !entry.connection->has_sent(); });
    const auto closing = idle != source.newcomers.end() ? idle : source.newcomers.begin();
    closing->connection->close_for_newer();  // takes itself off the list
    return true;
  }

  // The source holding the most newcomers; of those, the one whose oldest came first.
  MetricsSource* busiest_source() {
    MetricsSource* busiest = nullptr;
    for (auto& [address, source] : shared->sources) {
      if (source.newcomers.empty()) continue;
      if (!busiest || source.newcomers.size() > busiest->newcomers.size() ||
          (source.newcomers.size() == busiest->newcomers.size() &&
           source.newcomers.front().arrival < busiest->newcomers.front().arrival)) {
        busiest = &source;
      }
    }
    return busiest;
  }

  // Makes room for a connection from `source`, within its source's limit and the newcomers'; false
  // when it is to be closed unanswered instead.
  bool make_room(const asio::ip::address& source, const std::string& peer) {
    const auto own = shared->sources.find(source);
    if (own != shared->sources.end() && own->second.open >= kMaxConnectionsPerSource) {
      const bool closed = close_oldest_newcomer(own->second);
      const auto count = ++shared->closed_at_source_limit;
      if (count <= kSourceLimitWarnings || count % 1000 == 1) {
        spdlog::log(count <= kSourceLimitWarnings ? spdlog::level::warn : spdlog::level::debug,
                    "metrics: {} holds {} connections, the most one address may: {} ({} closed at this limit so "
                    "far){}",
                    source.to_string(), kMaxConnectionsPerSource,
                    closed ? "closed its oldest that has not authenticated"
                           : fmt::format("all have authenticated, so {} is closed unanswered", peer),
                    count, count == kSourceLimitWarnings ? "; further ones are logged at debug level" : "");
      }
      return closed;
    }
    MetricsSource* busiest = shared->newcomers < kMaxNewcomers ? nullptr : busiest_source();
    if (!busiest) return true;
    close_oldest_newcomer(*busiest);
    if (++shared->closed_for_newer % 1000 == 1) {
      spdlog::debug(
          "metrics: {} connections that have not authenticated are open: closed the oldest of the address "
          "holding the most ({} so far)",
          kMaxNewcomers, shared->closed_for_newer);
    }
    return true;
  }

  void serve(tcp::socket socket) {
    beast::error_code ec;
    const auto remote = socket.remote_endpoint(ec);
    if (ec) return;  // gone already; the socket closes here
    const std::string peer = fmt::format("{}:{}", remote.address().to_string(), remote.port());
    const auto address = metrics_source_of(remote.address());
    if (!make_room(address, peer)) {
      socket.close(ec);
      return;
    }
    // Taken after make_room, which may have closed this source's last connection and with it its entry.
    const auto source = shared->sources.try_emplace(address).first;
    if (tls) {
      std::make_shared<ScrapeConnection<beast::ssl_stream<beast::tcp_stream>>>(
          beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(socket)), *tls), shared, peer, source)
          ->start();
    } else {
      std::make_shared<ScrapeConnection<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), shared, peer, source)
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
