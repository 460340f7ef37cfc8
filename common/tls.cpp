#include "common/tls.hpp"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <boost/system/system_error.hpp>
#include <cstdint>
#include <filesystem>
#include <memory>

#include "common/printable.hpp"

namespace tusk {
namespace ssl = boost::asio::ssl;

namespace {

void require_readable(const std::string& path, const char* what) {
  if (path.empty()) throw TlsError(fmt::format("TLS: no {} file given", what));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw TlsError(fmt::format("TLS: {} file '{}' does not exist or is not a file", what, path));
  }
}

// OpenSSL's reason for a file it could not load, in words a user acts on: its decoder says
// "no start line" of a file with no PEM block and "unsupported" of an empty one.
std::string load_failure(const std::string& path, const char* what, const std::string& reason) {
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) == 0 && !ec) return "the file is empty";
  if (reason.find("no start line") != std::string::npos || reason.find("unsupported") != std::string::npos) {
    return fmt::format(
        "it holds no PEM {} (no '-----BEGIN' line); a DER file converts with `openssl x509 -inform der` (a key: "
        "`openssl pkey -inform der`)",
        what);
  }
  return reason;
}

template <typename Call>
void load(const std::string& path, const char* what, Call&& call) {
  try {
    call();
  } catch (const boost::system::system_error& e) {
    throw TlsError(
        fmt::format("TLS: cannot load {} '{}': {}", what, path, load_failure(path, what, e.code().message())));
  }
}

// What a certificate's extended key usage allows, for the message that refuses it.
std::string extended_key_usages(X509* certificate) {
  if ((X509_get_extension_flags(certificate) & EXFLAG_XKUSAGE) == 0) return "any (no extended key usage)";
  const std::uint32_t usage = X509_get_extended_key_usage(certificate);
  std::string text;
  const auto add = [&](std::uint32_t bit, const char* name) {
    if (usage & bit) text += (text.empty() ? "" : ", ") + std::string(name);
  };
  add(XKU_SSL_SERVER, "serverAuth");
  add(XKU_SSL_CLIENT, "clientAuth");
  add(XKU_SMIME, "emailProtection");
  add(XKU_CODE_SIGN, "codeSigning");
  add(XKU_OCSP_SIGN, "OCSPSigning");
  add(XKU_TIMESTAMP, "timeStamping");
  return text.empty() ? "none that TLS knows" : text;
}

// A certificate that cannot play this side's part fails every handshake later with a terse alert
// ("unsupported certificate"); refused here, at start, with what it allows and what it needs.
void require_purpose(SSL_CTX* context, const std::string& file, TlsRole role) {
  X509* certificate = SSL_CTX_get0_certificate(context);
  if (certificate == nullptr) return;
  const bool server = role == TlsRole::Controller;
  if (X509_check_purpose(certificate, server ? X509_PURPOSE_SSL_SERVER : X509_PURPOSE_SSL_CLIENT, 0) == 1) return;
  char subject[256] = "?";
  X509_NAME_get_text_by_NID(X509_get_subject_name(certificate), NID_commonName, subject, sizeof subject);
  std::string key_usage;
  if (X509_get_extension_flags(certificate) & EXFLAG_KUSAGE) {
    const std::uint32_t usage = X509_get_key_usage(certificate);
    if ((usage & (KU_DIGITAL_SIGNATURE | KU_KEY_ENCIPHERMENT | KU_KEY_AGREEMENT)) == 0) {
      key_usage = "; its key usage has none of digitalSignature, keyEncipherment, keyAgreement";
    }
  }
  throw TlsError(
      fmt::format("TLS: certificate '{}' (CN={}) cannot be a TLS {}: its extended key usage allows {}{}; the {} needs "
                  "extendedKeyUsage {} (an {}'s certificate given to the {}?)",
                  file, printable(subject), server ? "server" : "client", extended_key_usages(certificate), key_usage,
                  server ? "controller" : "agent", server ? "serverAuth" : "clientAuth",
                  server ? "agent" : "controller", server ? "controller" : "agent"));
}

}  // namespace

ssl::context make_tls_context(const TlsFiles& files, TlsRole role) {
  require_readable(files.ca_file, "CA certificate");
  require_readable(files.cert_file, "certificate");
  require_readable(files.key_file, "private key");

  ssl::context context(role == TlsRole::Controller ? ssl::context::tls_server : ssl::context::tls_client);
  // TLS 1.2 is the oldest version we allow; 1.0/1.1 and SSL are off.
  context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                      ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
  // On TLS 1.2, only AEAD suites with forward secrecy (TLS 1.3 has nothing else): the CBC suites
  // OpenSSL allows by default are the ones padding-oracle attacks go after.
  if (SSL_CTX_set_cipher_list(context.native_handle(), kTls12Ciphers) != 1) {
    throw TlsError(fmt::format("TLS: OpenSSL accepts none of the ciphers '{}'", kTls12Ciphers));
  }
  load(files.ca_file, "CA certificate", [&] { context.load_verify_file(files.ca_file); });
  load(files.cert_file, "certificate", [&] { context.use_certificate_chain_file(files.cert_file); });
  require_purpose(context.native_handle(), files.cert_file, role);
  // OpenSSL checks the key against the certificate as it loads it; name both files when it fails.
  try {
    context.use_private_key_file(files.key_file, ssl::context::pem);
  } catch (const boost::system::system_error& e) {
    throw TlsError(fmt::format("TLS: cannot use private key '{}' with certificate '{}': {}", files.key_file,
                               files.cert_file, load_failure(files.key_file, "private key", e.code().message())));
  }
  // Mutual authentication: a peer without a certificate from our CA is refused on both sides.
  context.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  if (role == TlsRole::Controller) {
    // No session resumption: every controller process makes new ticket keys and agents dial each
    // run afresh, so no ticket is ever used; issuing TLS 1.3's two tickets cost about a third of
    // the controller's CPU per handshake (0.5-0.9 ms on top of 1.2-1.4 ms, OpenSSL 3.0), which is
    // what bounds how fast a fleet registers.
    SSL_CTX* native = context.native_handle();
    SSL_CTX_set_num_tickets(native, 0);
    SSL_CTX_set_options(native, SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_OFF);
  }
  return context;
}

std::string certificate_common_name(const std::string& cert_file) {
  require_readable(cert_file, "certificate");
  std::unique_ptr<BIO, decltype(&BIO_free)> file(BIO_new_file(cert_file.c_str(), "r"), &BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> certificate(
      file ? PEM_read_bio_X509(file.get(), nullptr, nullptr, nullptr) : nullptr, &X509_free);
  if (!certificate) throw TlsError(fmt::format("TLS: certificate '{}' is not a PEM certificate", cert_file));
  char name[256] = "";
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(certificate.get()), NID_commonName, name, sizeof name) <= 0) {
    throw TlsError(fmt::format("TLS: certificate '{}' has no subject common name (CN)", cert_file));
  }
  return name;
}

std::optional<std::string> peer_common_name(ssl_st* ssl) {
  if (ssl == nullptr) return std::nullopt;
  std::unique_ptr<X509, decltype(&X509_free)> cert(SSL_get_peer_certificate(ssl), &X509_free);
  if (!cert) return std::nullopt;
  X509_NAME* subject = X509_get_subject_name(cert.get());
  char name[256] = {};
  if (X509_NAME_get_text_by_NID(subject, NID_commonName, name, sizeof(name)) <= 0) return std::nullopt;
  return std::string(name);
}

std::vector<std::string> peer_dns_names(ssl_st* ssl) {
  std::vector<std::string> names;
  if (ssl == nullptr) return names;
  std::unique_ptr<X509, decltype(&X509_free)> cert(SSL_get_peer_certificate(ssl), &X509_free);
  if (!cert) return names;
  std::unique_ptr<GENERAL_NAMES, decltype(&GENERAL_NAMES_free)> alternatives(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr)),
      &GENERAL_NAMES_free);
  if (!alternatives) return names;
  constexpr int kMaxNames = 64;
  constexpr int kMaxNameBytes = 253;
  for (int i = 0; i < sk_GENERAL_NAME_num(alternatives.get()) && names.size() < kMaxNames; ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(alternatives.get(), i);
    if (name->type != GEN_DNS) continue;
    const ASN1_IA5STRING* dns = name->d.dNSName;
    const int length = ASN1_STRING_length(dns);
    if (length <= 0 || length > kMaxNameBytes) continue;
    names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)), static_cast<std::size_t>(length));
  }
  return names;
}

}  // namespace tusk
