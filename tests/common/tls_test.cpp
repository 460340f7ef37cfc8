// Mutual TLS on real sockets: a controller-side Connection and an agent-side Connection on
// 127.0.0.1 with certificates made by scripts/make-certs.sh, from our CA and from another one.
#include <gtest/gtest.h>
#include <unistd.h>
#include <fstream>

#include <openssl/ssl.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdlib>
#include <filesystem>

#include "common/connection.hpp"
#include "common/tls.hpp"
#include "tests/support/build_paths.hpp"

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
    const std::string command = "bash " + tusk::build_paths::source_dir() + "/scripts/make-certs.sh " + root_ + "/" +
                                ca + " lab-a gpu01-nic0:gpu01 >/dev/null";
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
  std::vector<std::string> client_dns_names_seen_by_server;
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
          result.client_dns_names_seen_by_server = server->peer_dns_names();
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
  client->start_as_client(
      expected_host, [](proto::Envelope&) {}, [&](const std::string& reason) { result.client_close_reason = reason; });
  proto::Envelope hello;
  hello.mutable_heartbeat()->set_sender_time_ns(1);
  client->send(hello);
  io.run_for(std::chrono::seconds(10));
  return result;
}

// Our controller's handshake with the agent whose certificate (from our CA) is `agent`'s.
HandshakeResult attempt_as_our_agent(const std::string& agent) {
  auto server_tls = make_tls_context(certificates().files("ours", "controller"), TlsRole::Controller);
  auto client_tls = make_tls_context(certificates().files("ours", agent), TlsRole::Agent);
  return attempt(server_tls, &client_tls);
}

TEST(Tls, AgentSignedByOurCaIsAcceptedAndNamedByItsCertificate) {
  const auto result = attempt_as_our_agent("lab-a");
  EXPECT_TRUE(result.server_got_message) << result.server_close_reason;
  EXPECT_EQ(result.client_name_seen_by_server, "lab-a");
}

// One agent per NIC: make-certs.sh's AGENT:HOST names the host in the agent's certificate, which is
// what lets the controller take the host for the agent's node (controller/run/agent_identity).
TEST(Tls, AnAgentMadeForItsHostCarriesTheHostsNameBesideItsOwn) {
  const auto result = attempt_as_our_agent("gpu01-nic0");
  EXPECT_TRUE(result.server_got_message) << result.server_close_reason;
  EXPECT_EQ(result.client_name_seen_by_server, "gpu01-nic0");
  EXPECT_EQ(result.client_dns_names_seen_by_server, (std::vector<std::string>{"gpu01-nic0", "gpu01"}));
  const auto plain = attempt_as_our_agent("lab-a");
  EXPECT_EQ(plain.client_dns_names_seen_by_server, (std::vector<std::string>{"lab-a"}));
}

// Before: the controller started with an agent's certificate (clientAuth only) and every agent
// then failed at the handshake with "sslv3 alert unsupported certificate".
TEST(Tls, ACertificateThatCannotPlayItsSidesPartIsRefusedAtStartNamingItsKeyUsage) {
  try {
    make_tls_context(certificates().files("ours", "lab-a"), TlsRole::Controller);
    FAIL() << "the controller took an agent's certificate";
  } catch (const TlsError& e) {
    const std::string what = e.what();
    EXPECT_NE(
        what.find("lab-a.pem' (CN=lab-a) cannot be a TLS server: its extended key usage allows clientAuth; the "
                  "controller needs extendedKeyUsage serverAuth (an agent's certificate given to the controller?)"),
        std::string::npos)
        << what;
  }
  try {
    make_tls_context(certificates().files("ours", "controller"), TlsRole::Agent);
    FAIL() << "an agent took the controller's certificate";
  } catch (const TlsError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be a TLS client: its extended key usage allows serverAuth; the agent "
                                         "needs extendedKeyUsage clientAuth"),
              std::string::npos)
        << e.what();
  }
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
  // Before, the controller named the failed peer by IP:port only; the certificate it presented says who it claims to
  // be.
  EXPECT_NE(result.server_close_reason.find("(its certificate says CN=lab-a)"), std::string::npos)
      << result.server_close_reason;
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

// The agent's crash of issue 10: a send that overflows the queue closes the connection while a
// TLS write is still encrypting the front frame piece by piece. The frame is larger than glibc's
// largest mmap threshold, so freeing it early unmaps it and the next SSL_write faults.
TEST(Tls, OverflowingTheQueueDuringATlsWriteClosesWithoutTouchingFreedMemory) {
  auto server_tls = make_tls_context(certificates().files("ours", "controller"), TlsRole::Controller);
  auto client_tls = make_tls_context(certificates().files("ours", "lab-a"), TlsRole::Agent);
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  Connection::Limits limits;
  limits.max_frame = 64u << 20;
  limits.max_queued_bytes = 48u << 20;
  std::shared_ptr<Connection> server;
  int server_messages = 0;
  acceptor.async_accept([&](boost::system::error_code ec, asio::ip::tcp::socket socket) {
    ASSERT_FALSE(ec);
    server = Connection::create(std::move(socket), &server_tls, limits);
    server->start_as_server(
        [&](proto::Envelope&) {
          if (++server_messages == 1) io.stop();
        },
        [](const std::string&) {});
  });
  asio::ip::tcp::socket socket(io);
  socket.connect(acceptor.local_endpoint());
  auto client = Connection::create(std::move(socket), &client_tls, limits);
  std::string client_close_reason;
  client->start_as_client(
      "127.0.0.1", [](proto::Envelope&) {}, [&](const std::string& reason) { client_close_reason = reason; });
  proto::Envelope heartbeat;
  heartbeat.mutable_heartbeat()->set_sender_time_ns(1);
  client->send(heartbeat);
  io.run_for(std::chrono::seconds(10));
  ASSERT_EQ(server_messages, 1) << "handshake did not finish";
  io.restart();

  proto::Envelope big;
  big.mutable_error()->set_message(std::string(40u << 20, 'x'));
  client->send(big);  // starts a TLS write; its first piece completes at once
  big.mutable_error()->set_message(std::string(10u << 20, 'y'));
  client->send(big);  // 50 MiB queued: over the limit, the connection closes
  EXPECT_FALSE(client->is_open());
  io.run_for(std::chrono::seconds(2));
  EXPECT_NE(client_close_reason.find("peer is not reading"), std::string::npos) << client_close_reason;
}

// TLS 1.2 with CBC suites is refused; the same version with an AEAD suite is accepted, so it is
// the suite that is refused, not the version.
TEST(Tls, OnTls12OnlyAeadSuitesAreAccepted) {
  auto server_tls = make_tls_context(certificates().files("ours", "controller"), TlsRole::Controller);
  const auto client_offering = [](const char* ciphers) {
    auto context = make_tls_context(certificates().files("ours", "lab-a"), TlsRole::Agent);
    SSL_CTX_set_max_proto_version(context.native_handle(), TLS1_2_VERSION);
    EXPECT_EQ(SSL_CTX_set_cipher_list(context.native_handle(), ciphers), 1);
    return context;
  };
  auto cbc = client_offering("ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES256-SHA:ECDHE-ECDSA-AES128-SHA");
  const auto refused = attempt(server_tls, &cbc);
  EXPECT_FALSE(refused.server_got_message);
  EXPECT_NE(refused.server_close_reason.find("TLS handshake failed"), std::string::npos) << refused.server_close_reason;

  auto gcm = client_offering("ECDHE-ECDSA-AES128-GCM-SHA256");
  const auto accepted = attempt(server_tls, &gcm);
  EXPECT_TRUE(accepted.server_got_message) << accepted.server_close_reason;
}

// The controller issues no session tickets: no agent resumes (each controller run makes new
// ticket keys), and making them cost about a third of the controller's CPU per handshake.
TEST(Tls, TheControllerIssuesNoSessionTicketsAnAgentCouldResumeWith) {
  auto server_tls = make_tls_context(certificates().files("ours", "controller"), TlsRole::Controller);
  auto client_tls = make_tls_context(certificates().files("ours", "lab-a"), TlsRole::Agent);
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  std::shared_ptr<Connection> server, client;
  proto::Envelope heartbeat;
  heartbeat.mutable_heartbeat()->set_sender_time_ns(1);
  acceptor.async_accept([&](boost::system::error_code ec, asio::ip::tcp::socket socket) {
    ASSERT_FALSE(ec);
    server = Connection::create(std::move(socket), &server_tls, Connection::Limits{});
    server->start_as_server([&](proto::Envelope&) { server->send(heartbeat); }, [](const std::string&) {});
  });
  asio::ip::tcp::socket socket(io);
  socket.connect(acceptor.local_endpoint());
  client = Connection::create(std::move(socket), &client_tls, Connection::Limits{});
  // TLS 1.3 tickets travel after the handshake, ahead of the server's first record: once the
  // reply is here, any ticket would be too.
  std::optional<bool> resumable;
  client->start_as_client(
      "127.0.0.1",
      [&](proto::Envelope&) {
        resumable = SSL_SESSION_is_resumable(SSL_get0_session(client->tls_handle())) == 1;
        io.stop();
      },
      [](const std::string&) {});
  client->send(heartbeat);
  io.run_for(std::chrono::seconds(10));
  ASSERT_TRUE(resumable.has_value()) << "the controller's reply never arrived";
  EXPECT_FALSE(*resumable);
  EXPECT_EQ(SSL_version(client->tls_handle()), TLS1_3_VERSION);
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

// Issue 57, before: OpenSSL's "no start line" for a file with no PEM block, "unsupported" for an
// empty key.
TEST(Tls, AFileThatIsNoPemOrEmptyIsSaidSoInWords) {
  const std::string dir = ::testing::TempDir() + "tusk-tls-files-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/der.pem") << std::string("\x30\x82\x01\x0a\x02\x82", 6);
  std::ofstream(dir + "/empty.key");
  const auto error_of = [](const TlsFiles& files) {
    try {
      make_tls_context(files, TlsRole::Agent);
    } catch (const TlsError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  TlsFiles files = certificates().files("ours", "lab-a");
  files.cert_file = dir + "/der.pem";
  EXPECT_EQ(error_of(files), "TLS: cannot load certificate '" + files.cert_file +
                                 "': it holds no PEM certificate (no '-----BEGIN' line); a DER file converts with "
                                 "`openssl x509 -inform der` (a key: `openssl pkey -inform der`)");
  files = certificates().files("ours", "lab-a");
  files.key_file = dir + "/empty.key";
  EXPECT_EQ(error_of(files), "TLS: cannot use private key '" + files.key_file + "' with certificate '" +
                                 files.cert_file + "': the file is empty");
  std::filesystem::remove_all(dir);
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
