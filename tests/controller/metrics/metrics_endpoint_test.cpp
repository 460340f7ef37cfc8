// The limits of /metrics's connections, against a MetricsEndpoint in this process: what one address
// may hold, which connection a newer one closes, and that a scraper that authenticated is never the
// one. Clients come from addresses of 127/8 (Linux routes all of it on lo) so that sources differ.
// The server takes connections in the order they were made; a scrape from an address of its own,
// once answered, says it has taken and placed every connection made before it.
#include "controller/metrics/metrics_endpoint.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "controller/profile/profile_loader.hpp"

namespace tusk {
namespace {

using namespace std::chrono_literals;

constexpr auto kEndpointProfile = R"(name: metrics-endpoint
agents: {hosts: [lab-a, lab-b]}
tests:
  - name: soak
    engine: dpdk
    duration: 10s
    topology: pairs
    rate: 1kpps
    frame_size: 1000B
)";

// "prometheus:s3cret", as an Authorization header's value.
constexpr auto kValidAuthorization = "Basic cHJvbWV0aGV1czpzM2NyZXQ=";

// A socket from `source` connected to the endpoint, asking nothing; -1 when it cannot connect.
int dial_from(const std::string& source, std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &local.sin_addr);
  sockaddr_in server{};
  server.sin_family = AF_INET;
  server.sin_port = htons(port);
  server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const timeval five_seconds{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &five_seconds, sizeof five_seconds);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0 ||
      ::connect(fd, reinterpret_cast<const sockaddr*>(&server), sizeof server) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Whether the server has closed `fd`: it never sends these clients anything, so readable is closed.
bool closed_by_server(int fd) {
  pollfd entry{fd, POLLIN, 0};
  return ::poll(&entry, 1, 0) > 0;
}

// GET /metrics on `fd`: the whole answer (status line, headers, body), or what came of it in 5 s.
std::string scrape_on(int fd, const std::string& authorization = "") {
  std::string request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!authorization.empty()) request += "Authorization: " + authorization + "\r\n";
  request += "\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) return "";
  std::string answer;
  char buffer[16384];
  while (true) {
    const auto header_end = answer.find("\r\n\r\n");
    if (header_end != std::string::npos) {
      const auto length_at = answer.find("Content-Length: ");
      if (length_at == std::string::npos || length_at > header_end) return answer;
      const auto length = std::stoul(answer.substr(length_at + 16));
      if (answer.size() >= header_end + 4 + length) return answer;
    }
    const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
    if (got <= 0) return answer;
    answer.append(buffer, static_cast<std::size_t>(got));
  }
}

std::string scrape_from(const std::string& source, std::uint16_t port, const std::string& authorization = "") {
  const int fd = dial_from(source, port);
  if (fd < 0) return "";
  std::string answer = scrape_on(fd, authorization);
  ::close(fd);
  return answer;
}

bool answered_a_page(const std::string& answer) {
  return answer.starts_with("HTTP/1.1 200") && answer.find("\ntusk_metrics_pages_rendered_total ") != std::string::npos;
}

class MetricsEndpointLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    metrics_ = std::make_shared<LiveMetrics>(load_profile_text(kEndpointProfile, "metrics-endpoint.yaml"));
  }
  void TearDown() override {
    for (const int fd : fds_) ::close(fd);
    if (!auth_file_.empty()) std::filesystem::remove(auth_file_);
  }

  std::unique_ptr<MetricsEndpoint> serve(bool with_password = false) {
    MetricsSecurity security;
    if (with_password) {
      auth_file_ = ::testing::TempDir() + "metrics-endpoint-auth";
      std::ofstream(auth_file_) << "prometheus:s3cret\n";
      security.basic_auth = auth_file_;
    }
    return std::make_unique<MetricsEndpoint>(HostPort{"127.0.0.1", 0}, metrics_, security);
  }

  // `count` connections from `source`, asking nothing; kept open until the test ends.
  std::vector<int> dial_many(const std::string& source, std::uint16_t port, int count) {
    std::vector<int> opened;
    for (int i = 0; i < count; ++i) {
      const int fd = dial_from(source, port);
      EXPECT_GE(fd, 0) << "connection " << i << " from " << source;
      if (fd < 0) continue;
      opened.push_back(fd);
      fds_.push_back(fd);
    }
    return opened;
  }

  std::shared_ptr<LiveMetrics> metrics_;
  std::vector<int> fds_;
  std::string auth_file_;
};

// Before: connections were limited only all together (256), so one address took the whole table.
TEST_F(MetricsEndpointLimits, OneAddressHoldsAtMost32AndPastThatClosesItsOwnOldestOnly) {
  const auto endpoint = serve();
  const std::uint16_t port = endpoint->port();
  const std::vector<int> neighbour = dial_many("127.0.0.3", port, 1);
  const std::vector<int> flood = dial_many("127.0.0.2", port, 40);
  ASSERT_EQ(flood.size(), 40u);
  const std::string page = scrape_from("127.0.0.4", port);
  ASSERT_TRUE(answered_a_page(page)) << page;
  EXPECT_NE(page.find("tusk_metrics_connections_closed_total{limit=\"source\"} 8\n"), std::string::npos) << page;
  EXPECT_NE(page.find("tusk_metrics_connections_closed_total{limit=\"newcomers\"} 0\n"), std::string::npos) << page;
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(i < 8 ? 10ms : 0ms);  // a FIN on lo is there at once; this is slack
    EXPECT_EQ(closed_by_server(flood[static_cast<std::size_t>(i)]), i < 8) << "connection " << i << " of 40";
  }
  ASSERT_EQ(neighbour.size(), 1u);
  EXPECT_FALSE(closed_by_server(neighbour[0])) << "another address's connection was closed for 127.0.0.2's";
  EXPECT_TRUE(answered_a_page(scrape_on(neighbour[0])));
}

// Before: a new connection past 256 closed the oldest that had not been answered, whoever made it,
// so a scraper whose request came after 256 newer connections (a scraper far away, or one whose TLS
// handshake a flood slowed) was closed unanswered; and a scraper that had authenticated shared the
// table with those that had not.
TEST_F(MetricsEndpointLimits, AScrapersConnectionOutlastsFloodsFromManyAddressesAndOnceAuthenticatedStays) {
  const auto endpoint = serve(/*with_password=*/true);
  const std::uint16_t port = endpoint->port();
  const std::vector<int> scraper = dial_many("127.0.0.3", port, 1);  // the oldest, its request yet to come
  ASSERT_EQ(scraper.size(), 1u);
  std::vector<int> flood;
  for (int source = 10; source < 19; ++source) {
    const auto opened = dial_many("127.0.0." + std::to_string(source), port, 30);  // under the 32 of one address
    flood.insert(flood.end(), opened.begin(), opened.end());
  }
  ASSERT_EQ(flood.size(), 270u);
  // A client without the password is refused, and is one newcomer more (closing one more).
  EXPECT_EQ(scrape_from("127.0.0.4", port).substr(0, 12), "HTTP/1.1 401");
  const std::string first = scrape_on(scraper[0], kValidAuthorization);
  ASSERT_TRUE(answered_a_page(first)) << "the scraper's connection was closed for newer ones: " << first;
  // 1 + 270 + 1 newcomers, 192 of them allowed: 80 closed, each of an address that held the most.
  EXPECT_NE(first.find("tusk_metrics_connections_closed_total{limit=\"newcomers\"} 80\n"), std::string::npos) << first;
  std::this_thread::sleep_for(10ms);
  std::size_t open = 0;
  for (const int fd : flood) open += closed_by_server(fd) ? 0 : 1;
  EXPECT_EQ(open, 190u) << "192 newcomers, the scraper and the refused client two of them";

  // Authenticated, it is never closed for a newcomer: 270 more from the same addresses, and it is answered.
  for (int source = 10; source < 19; ++source) dial_many("127.0.0." + std::to_string(source), port, 30);
  EXPECT_EQ(scrape_from("127.0.0.4", port).substr(0, 12), "HTTP/1.1 401");  // all taken, and placed
  EXPECT_FALSE(closed_by_server(scraper[0]));
  EXPECT_TRUE(answered_a_page(scrape_on(scraper[0], kValidAuthorization)));
}

}  // namespace
}  // namespace tusk
