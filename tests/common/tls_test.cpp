// Mutual TLS on real sockets: a controller-side Connection and an agent-side Connection on
// 127.0.0.1 with certificates made by scripts/make-certs.sh, from our CA and from another one.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdlib>
#include <filesystem>

#include "common/connection.hpp"
#include "common/tls.hpp"

namespace tusk {
namespace {
namespace asio = boost::asio;
namespace fs = std::filesystem;

class Certificates {
 public:
  Certificates() {
    char pattern[] = "/tmp/tusk-tls-XXXXXX";
    if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp");
    root_ = pattern;
    make("ours");
    make("theirs");
  }
  ~Certificates() { fs::remove_all(root_); }

  TlsFiles files(const std::string& ca, const std::string& who) const {
    const std::string dir = root_ + "/" + ca + "/";
    return {dir + "ca.pem", dir + who + ".pem", dir + who + ".key"};
  }
  std::string path(const std::string& ca, const std::string& file) const { return root_ + "/" + ca + "/" + file; }

 private:
  void make(const std::string& ca) {
    const std::string command = "bash " TUSK_SOURCE_DIR "/scripts/make-certs.sh " + root_ + "/" + ca + " lab-a >/dev/null";
    if (std::system(command.c_str()) != 0) throw std::runtime_error("make-certs.sh failed");
  }
  std::string root_;
};

const Certificates& certificates() {
  static Certificates instance;
  return instance;
}

struct HandshakeResult {
  bool server_got_message = false;
  std::optional<std::string> client_name_seen_by_server;
  std::string server_close_reason;
  std::string client_close_reason;
};

// Runs one connection attempt; `client_tls` null means a plaintext client.
HandshakeResult attempt(asio::ssl::context& server_tls, asio::ssl::context* client_tls,
                        const std::string& expected_host = "127.0.0.1") {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  HandshakeResult result;
  std::shared_ptr<Connection> server, client;
  acceptor.async_accept([&](boost::system::error_code ec, asio::ip::tcp::socket socket) {
    ASSERT_FALSE(ec);
    server = Connection::create(std::move(socket), &server_tls, Connection::Limits{});
    server->start_as_server(
        [&](proto::Envelope&) {
          result.server_got_message = true;
          result.client_name_seen_by_server = server->peer_common_name();
          io.stop();
        },
        [&](const std::string& reason) {
          result.server_close_reason = reason;
          io.stop();
        });
  });
  asio::ip::tcp::socket socket(io);
  socket.connect(acceptor.local_endpoint());
  client = Connection::create(std::move(socket), client_tls, Connection::Limits{});
  client->start_as_client(expected_host, [](proto::Envelope&) {},
                          [&](const std::string& reason) { result.client_close_reason = reason; });
  proto::Envelope hello;
  hello.mutable_heartbeat()->set_sender_time_ns(1);
  client->send(hello);
  io.run_for(std::chrono::seconds(10));
  return result;
}

TEST(Tls, AgentSignedByOurCaIsAcceptedAndNamedByItsCertificate) {
  auto server_tls = make_tls_context(certificates().files("ours", "controller"), TlsRole::Controller);
  auto client_tls = make_tls_context(certificates().files("ours", "lab-a"), TlsRole::Agent);
  const auto result = attempt(server_tls, &client_tls);
  EXPECT_TRUE(result.server_got_message) << result.server_close_reason;
  EXPECT_EQ(result.client_name_seen_by_server, "lab-a");
}

TEST(Tls, AgentCertificateFromAnotherCaIsRefused) {
  auto server_tls = make_tls_context(certificates().files("ours", "controller"), TlsRole::Controller);
  // The impostor trusts our CA (so it would accept our controller) but its own certificate is theirs.
  TlsFiles impostor = certificates().files("theirs", "lab-a");
  impostor.ca_file = certificates().path("ours", "ca.pem");
  auto client_tls = make_tls_context(impostor, TlsRole::Agent);
  const auto result = attempt(server_tls, &client_tls);
  EXPECT_FALSE(result.server_got_message);
  EXPECT_NE(result.server_close_reason.find("TLS handshake failed"), std::string::npos) << result.server_close_reason;
}

TEST(Tls, ControllerCertificateFromAnotherCaIsRefusedByTheAgent) {
  TlsFiles rogue = certificates().files("theirs", "controller");
  rogue.ca_file = certificates().path("ours", "ca.pem");  // it would accept our agents
  auto server_tls = make_tls_context(rogue, TlsRole::Controller);
  auto client_tls = make_tls_context(certificates().files("ours", "lab-a"), TlsRole::Agent);
  const auto result = attempt(server_tls, &client_tls);
  EXPECT_FALSE(result.server_got_message);
  EXPECT_NE(result.client_close_reason.find("TLS handshake failed"), std::string::npos) << result.client_close_reason;
}

TEST(Tls, PlaintextClientIsRefusedByATlsController) {
  auto server_tls = make_tls_context(certificates().files("ours", "controller"), TlsRole::Controller);
  const auto result = attempt(server_tls, nullptr);
  EXPECT_FALSE(result.server_got_message);
  EXPECT_NE(result.server_close_reason.find("TLS handshake failed"), std::string::npos) << result.server_close_reason;
}

TEST(Tls, AgentRefusesAControllerWhoseCertificateDoesNotNameTheDialledHost) {
  auto server_tls = make_tls_context(certificates().files("ours", "controller"), TlsRole::Controller);
  auto client_tls = make_tls_context(certificates().files("ours", "lab-a"), TlsRole::Agent);
  const auto result = attempt(server_tls, &client_tls, "controller.elsewhere.example");
  EXPECT_FALSE(result.server_got_message);
  EXPECT_NE(result.client_close_reason.find("TLS handshake failed"), std::string::npos) << result.client_close_reason;
}

TEST(Tls, MissingFileIsNamedInTheError) {
  TlsFiles files = certificates().files("ours", "lab-a");
  files.cert_file = "/nonexistent/lab-a.pem";
  try {
    make_tls_context(files, TlsRole::Agent);
    FAIL() << "expected TlsError";
  } catch (const TlsError& e) {
    EXPECT_STREQ(e.what(), "TLS: certificate file '/nonexistent/lab-a.pem' does not exist or is not a file");
  }
}

TEST(Tls, KeyThatDoesNotMatchTheCertificateIsRefused) {
  TlsFiles files = certificates().files("ours", "lab-a");
  files.key_file = certificates().path("ours", "controller.key");
  try {
    make_tls_context(files, TlsRole::Agent);
    FAIL() << "expected TlsError";
  } catch (const TlsError& e) {
    EXPECT_EQ(std::string(e.what()), "TLS: cannot use private key '" + files.key_file + "' with certificate '" +
                                         files.cert_file + "': key values mismatch");
  }
}

}  // namespace
}  // namespace tusk
