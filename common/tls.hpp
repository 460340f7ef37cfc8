// TLS set-up for the control plane. Both sides authenticate: the controller accepts only agents
// whose certificate the lab CA signed, and an agent accepts only a controller signed by that CA
// whose certificate names the address the agent dialled.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct ssl_st;

namespace tusk {

struct TlsFiles {
  std::string ca_file;    // PEM CA certificate that signs the peer's certificate
  std::string cert_file;  // PEM certificate of this side
  std::string key_file;   // PEM private key of this side
};

enum class TlsRole { Controller, Agent };

// The TLS 1.2 suites either side accepts: ECDHE with AES-GCM or ChaCha20-Poly1305.
inline constexpr const char* kTls12Ciphers = "ECDHE+AESGCM:ECDHE+CHACHA20";

class TlsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws TlsError naming the file and OpenSSL's reason when a file is missing or does not match.
boost::asio::ssl::context make_tls_context(const TlsFiles& files, TlsRole role);

// The subject common name of the PEM certificate in `cert_file`. Throws TlsError naming the file
// when it cannot be read or has no common name.
std::string certificate_common_name(const std::string& cert_file);

// The subject common name of the peer's verified certificate, or nullopt when there is none.
std::optional<std::string> peer_common_name(ssl_st* ssl);

// The DNS names among the subject alternative names of the peer's verified certificate (at most
// 64, each at most 253 bytes; others are not names a host has).
std::vector<std::string> peer_dns_names(ssl_st* ssl);

}  // namespace tusk
