// The SNMP credentials a fabric's switches take, kept apart from the topology file (which names
// them) so that the secrets can live in a file only the controller's user reads:
//
//   fabric-ro:                 # a name the topology file's management.snmp gives
//     version: 2c
//     community: public-ro
//   fabric-v3:
//     version: 3
//     user: tusk
//     auth_protocol: sha       # md5 | sha | sha224 | sha256 | sha384 | sha512
//     auth_passphrase: ...
//     privacy_protocol: aes    # optional: des | aes (authPriv); without it authNoPriv
//     privacy_passphrase: ...
//
// Every mistake is reported at once as file:line:column: field: message, as profiles are.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/yaml_reader.hpp"

namespace tusk {

enum class SnmpVersion { V2c, V3 };

struct SnmpCredential {
  std::string name;
  SnmpVersion version = SnmpVersion::V2c;
  std::string community;           // v2c
  std::string user;                // v3
  std::string auth_protocol;       // v3: as written, lower case
  std::string auth_passphrase;     // v3
  std::string privacy_protocol;    // v3: "" for authNoPriv
  std::string privacy_passphrase;  // v3
};

using SnmpCredentials = std::map<std::string, SnmpCredential>;

class SnmpCredentialsInvalid : public std::runtime_error {
 public:
  explicit SnmpCredentialsInvalid(std::vector<YamlError> errors);
  const std::vector<YamlError>& errors() const { return errors_; }

 private:
  std::vector<YamlError> errors_;
};

// Throw SnmpCredentialsInvalid, also when the file cannot be read.
SnmpCredentials load_snmp_credentials_file(const std::string& path);
SnmpCredentials load_snmp_credentials_text(std::string_view yaml_text, const std::string& file_name);

}  // namespace tusk
