// Certificates for thousands of simulated agents, made in memory: one key pair shared by all (the
// controller checks the certificate's name, not the key's uniqueness) and one certificate per
// agent name, signed by the lab CA that scripts/make-certs.sh made. openssl on the command line
// takes minutes for 16,384 agents; this takes a second or two.
//
// All agents share one client context (OpenSSL 3 makes contexts slowly); each connection presents
// its own agent's certificate.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace tusk::bench {

class AgentCertificates {
 public:
  // Reads DIR/ca.pem and DIR/ca.key; throws std::runtime_error naming the file.
  explicit AgentCertificates(const std::string& ca_dir);
  AgentCertificates(const AgentCertificates&) = delete;
  AgentCertificates& operator=(const AgentCertificates&) = delete;

  // Makes the certificate naming `agent`; before any of its handshakes.
  void add(const std::string& agent);
  // Makes `ssl` (a connection of the shared context) present `agent`'s certificate.
  void present(SSL* ssl, const std::string& agent) const;
  boost::asio::ssl::context& context() { return context_; }

 private:
  using X509Owner = std::unique_ptr<X509, decltype(&X509_free)>;

  X509Owner ca_cert_{nullptr, &X509_free};
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> ca_key_{nullptr, &EVP_PKEY_free};
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> agent_key_{nullptr, &EVP_PKEY_free};
  std::map<std::string, X509Owner> certificates_;
  boost::asio::ssl::context context_{boost::asio::ssl::context::tls_client};
  std::uint64_t serial_ = 1000;
};

}  // namespace tusk::bench
