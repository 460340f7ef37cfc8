// What one mutually authenticated TLS handshake costs each side, with Tusk's own TLS contexts
// (common/tls.cpp) and lab certificates (scripts/make-certs.sh), in one process over memory BIOs:
// no sockets, no protocol, so this is the floor under how fast a fleet can register.
//
//   tls_handshake_bench [--handshakes 2000] [--agents 4096]
//
// References measured in the same run: the controller context with OpenSSL's default session
// tickets (what Tusk did before), and the elliptic-curve arithmetic a handshake cannot avoid
// (ephemeral key, shared secret, one signature, two verifications per side).
#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <time.h>
#include <CLI/CLI.hpp>

#include <boost/asio/ssl/context.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "common/tls.hpp"
#include "tests/support/build_paths.hpp"

namespace {
namespace fs = std::filesystem;

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

struct PerSide {
  double server_ms = 0;
  double client_ms = 0;
};

// Runs `count` handshakes between fresh SSL objects of the two contexts, charging each side's
// SSL_do_handshake calls to it, then the server's first application record (which carries any
// session tickets) to the server and its reading to the client.
PerSide handshakes(SSL_CTX* server_ctx, SSL_CTX* client_ctx, int count) {
  double server_s = 0, client_s = 0;
  for (int i = 0; i < count; ++i) {
    std::unique_ptr<SSL, decltype(&SSL_free)> server(SSL_new(server_ctx), &SSL_free);
    std::unique_ptr<SSL, decltype(&SSL_free)> client(SSL_new(client_ctx), &SSL_free);
    BIO* server_bio = nullptr;
    BIO* client_bio = nullptr;
    if (!server || !client || BIO_new_bio_pair(&server_bio, 1 << 16, &client_bio, 1 << 16) != 1) {
      throw std::runtime_error("OpenSSL: cannot make an SSL pair");
    }
    SSL_set_bio(server.get(), server_bio, server_bio);
    SSL_set_bio(client.get(), client_bio, client_bio);
    SSL_set_accept_state(server.get());
    SSL_set_connect_state(client.get());
    SSL_set_tlsext_host_name(client.get(), "localhost");
    SSL_set1_host(client.get(), "localhost");
    for (int round = 0; round < 8 && !(SSL_is_init_finished(server.get()) && SSL_is_init_finished(client.get()));
         ++round) {
      double begin = thread_cpu_s();
      SSL_do_handshake(client.get());
      client_s += thread_cpu_s() - begin;
      begin = thread_cpu_s();
      SSL_do_handshake(server.get());
      server_s += thread_cpu_s() - begin;
    }
    if (!SSL_is_init_finished(server.get()) || !SSL_is_init_finished(client.get())) {
      throw std::runtime_error("TLS handshake did not finish: are the certificates right?");
    }
    char byte = 'x';
    double begin = thread_cpu_s();
    SSL_write(server.get(), &byte, 1);
    server_s += thread_cpu_s() - begin;
    begin = thread_cpu_s();
    SSL_read(client.get(), &byte, 1);
    client_s += thread_cpu_s() - begin;
  }
  return {server_s / count * 1e3, client_s / count * 1e3};
}

// The arithmetic of one side of a P-256 handshake: make an ephemeral key, derive the shared
// secret, sign the transcript, verify the peer's certificate and its transcript signature.
double curve_floor_ms(int count) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> signer(EVP_EC_gen("P-256"), &EVP_PKEY_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> peer(EVP_EC_gen("P-256"), &EVP_PKEY_free);
  if (!signer || !peer) throw std::runtime_error("OpenSSL: cannot make P-256 keys");
  unsigned char digest[32] = {1};
  unsigned char signature[80];
  const double begin = thread_cpu_s();
  for (int i = 0; i < count; ++i) {
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> ephemeral(EVP_EC_gen("P-256"), &EVP_PKEY_free);
    std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> derive(EVP_PKEY_CTX_new(ephemeral.get(), nullptr),
                                                                       &EVP_PKEY_CTX_free);
    unsigned char secret[32];
    std::size_t secret_size = sizeof(secret);
    EVP_PKEY_derive_init(derive.get());
    EVP_PKEY_derive_set_peer(derive.get(), peer.get());
    EVP_PKEY_derive(derive.get(), secret, &secret_size);

    std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> sign(EVP_PKEY_CTX_new(signer.get(), nullptr),
                                                                     &EVP_PKEY_CTX_free);
    std::size_t signature_size = sizeof(signature);
    EVP_PKEY_sign_init(sign.get());
    EVP_PKEY_sign(sign.get(), signature, &signature_size, digest, sizeof(digest));
    for (int verification = 0; verification < 2; ++verification) {
      std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> verify(EVP_PKEY_CTX_new(signer.get(), nullptr),
                                                                         &EVP_PKEY_CTX_free);
      EVP_PKEY_verify_init(verify.get());
      if (EVP_PKEY_verify(verify.get(), signature, signature_size, digest, sizeof(digest)) != 1) {
        throw std::runtime_error("OpenSSL: a signature we made does not verify");
      }
    }
  }
  return (thread_cpu_s() - begin) / count * 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tls_handshake_bench: CPU per mutually authenticated TLS handshake, each side"};
  int count = 2000;
  int agents = 4096;
  app.add_option("--handshakes", count, "handshakes per measurement")
      ->check(CLI::Range(10, 1000000))
      ->capture_default_str();
  app.add_option("--agents", agents, "fleet size to turn the cost into a registration time")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  char pattern[] = "/tmp/tusk-tls-bench-XXXXXX";
  if (mkdtemp(pattern) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string dir = pattern;
  const std::string make =
      "bash " + tusk::build_paths::source_dir() + "/scripts/make-certs.sh " + dir + " lab-a >/dev/null";
  if (std::system(make.c_str()) != 0) {
    std::fprintf(stderr, "tls_handshake_bench: scripts/make-certs.sh failed\n");
    return 1;
  }
  try {
    auto controller = tusk::make_tls_context({dir + "/ca.pem", dir + "/controller.pem", dir + "/controller.key"},
                                             tusk::TlsRole::Controller);
    auto agent =
        tusk::make_tls_context({dir + "/ca.pem", dir + "/lab-a.pem", dir + "/lab-a.key"}, tusk::TlsRole::Agent);
    // The reference: the same controller context with OpenSSL's default two TLS 1.3 tickets.
    auto with_tickets = tusk::make_tls_context({dir + "/ca.pem", dir + "/controller.pem", dir + "/controller.key"},
                                               tusk::TlsRole::Controller);
    SSL_CTX_set_num_tickets(with_tickets.native_handle(), 2);
    SSL_CTX_clear_options(with_tickets.native_handle(), SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(with_tickets.native_handle(), SSL_SESS_CACHE_SERVER);

    handshakes(controller.native_handle(), agent.native_handle(), count / 10);  // warm up
    const PerSide tusk_side = handshakes(controller.native_handle(), agent.native_handle(), count);
    const PerSide ticket_side = handshakes(with_tickets.native_handle(), agent.native_handle(), count);
    const double floor = curve_floor_ms(count);

    std::printf("tls_handshake_bench: %d handshakes each, TLS %s, P-256 certificates, %s\n", count, "1.3",
                OpenSSL_version(OPENSSL_VERSION));
    std::printf("  controller side, Tusk's context      %7.3f ms   (client %.3f ms)\n", tusk_side.server_ms,
                tusk_side.client_ms);
    std::printf("  controller side, with tickets (ref)  %7.3f ms   (client %.3f ms)   Tusk/ref %.2f\n",
                ticket_side.server_ms, ticket_side.client_ms, tusk_side.server_ms / ticket_side.server_ms);
    std::printf("  curve arithmetic per side (floor)    %7.3f ms   Tusk/floor %.1f\n", floor,
                tusk_side.server_ms / floor);
    std::printf(
        "  %d agents: %.2f s of controller CPU and %.2f s of the agents' to handshake; on a machine\n"
        "  where both share two cores, registration cannot take less than %.2f s\n",
        agents, tusk_side.server_ms * agents / 1e3, tusk_side.client_ms * agents / 1e3,
        (tusk_side.server_ms + tusk_side.client_ms) * agents / 2e3);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tls_handshake_bench: %s\n", e.what());
    fs::remove_all(dir);
    return 1;
  }
  fs::remove_all(dir);
  return 0;
}
