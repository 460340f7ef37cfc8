#include "bench/controller_scale/agent_certificates.hpp"

#include <fmt/format.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <stdexcept>

#include "common/tls.hpp"

namespace tusk::bench {
namespace {

template <typename T, typename Reader>
T* read_pem(const std::string& path, Reader reader) {
  std::FILE* file = std::fopen(path.c_str(), "r");
  if (!file) throw std::runtime_error(fmt::format("cannot open '{}'", path));
  T* value = reader(file, nullptr, nullptr, nullptr);
  std::fclose(file);
  if (!value) throw std::runtime_error(fmt::format("'{}' holds no PEM of the expected kind", path));
  return value;
}

void check(int ok, const char* what) {
  if (ok != 1) throw std::runtime_error(fmt::format("OpenSSL: {} failed", what));
}

}  // namespace

AgentCertificates::AgentCertificates(const std::string& ca_dir) {
  ca_cert_.reset(read_pem<X509>(ca_dir + "/ca.pem", PEM_read_X509));
  ca_key_.reset(read_pem<EVP_PKEY>(ca_dir + "/ca.key", PEM_read_PrivateKey));
  agent_key_.reset(EVP_EC_gen("P-256"));
  if (!agent_key_) throw std::runtime_error("OpenSSL: cannot make a P-256 key");
  context_.set_options(boost::asio::ssl::context::no_sslv2 | boost::asio::ssl::context::no_sslv3 |
                       boost::asio::ssl::context::no_tlsv1 | boost::asio::ssl::context::no_tlsv1_1);
  SSL_CTX* native = context_.native_handle();
  check(SSL_CTX_set_cipher_list(native, kTls12Ciphers), "SSL_CTX_set_cipher_list");
  check(X509_STORE_add_cert(SSL_CTX_get_cert_store(native), ca_cert_.get()), "X509_STORE_add_cert");
  context_.set_verify_mode(boost::asio::ssl::verify_peer);
}

void AgentCertificates::add(const std::string& agent) {
  X509Owner cert(X509_new(), &X509_free);
  check(X509_set_version(cert.get(), 2), "X509_set_version");
  ASN1_INTEGER_set_uint64(X509_get_serialNumber(cert.get()), ++serial_);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("Tusk lab"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(agent.c_str()), -1, -1,
                             0);
  check(X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert_.get())), "X509_set_issuer_name");
  check(X509_set_pubkey(cert.get(), agent_key_.get()), "X509_set_pubkey");
  X509V3_CTX v3;
  X509V3_set_ctx(&v3, ca_cert_.get(), cert.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] :
       {std::pair{NID_basic_constraints, "CA:FALSE"}, std::pair{NID_key_usage, "digitalSignature,keyEncipherment"},
        std::pair{NID_ext_key_usage, "clientAuth"}}) {
    X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &v3, nid, value);
    if (!extension) throw std::runtime_error("OpenSSL: cannot make a certificate extension");
    X509_add_ext(cert.get(), extension, -1);
    X509_EXTENSION_free(extension);
  }
  if (X509_sign(cert.get(), ca_key_.get(), EVP_sha256()) <= 0) throw std::runtime_error("OpenSSL: X509_sign failed");
  certificates_.insert_or_assign(agent, std::move(cert));
}

void AgentCertificates::present(SSL* ssl, const std::string& agent) const {
  check(SSL_use_certificate(ssl, certificates_.at(agent).get()), "SSL_use_certificate");
  check(SSL_use_PrivateKey(ssl, agent_key_.get()), "SSL_use_PrivateKey");
}

}  // namespace tusk::bench
