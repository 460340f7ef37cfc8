#include "controller/switches/snmp_credentials.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tusk {
namespace {

// USM's passphrases: at least 8 characters (RFC 3414 section 11.2), which net-snmp enforces too.
constexpr std::size_t kMinPassphrase = 8;

class CredentialsReader {
 public:
  explicit CredentialsReader(YamlErrors& errors) : read_(errors) {}

  SnmpCredentials read(const YAML::Node& node) {
    const YamlValue root = read_.root(node);
    if (node.IsNull()) {
      read_.fail(root, "the SNMP credentials file is empty: expected a mapping of names to credentials");
      return {};
    }
    SnmpCredentials credentials;
    const auto entries = read_.mapping(root, "a mapping of names to credentials");
    for (const auto& entry : entries.value_or(std::vector<YamlEntry>{})) {
      if (auto credential = read_one(entry)) credentials.emplace(entry.key, std::move(*credential));
    }
    return credentials;
  }

 private:
  std::optional<SnmpCredential> read_one(const YamlEntry& named) {
    const auto entries = read_.mapping(named.value, "a mapping with version and a community or a user");
    if (!entries) return std::nullopt;
    SnmpCredential credential;
    credential.name = named.key;
    const YamlValue* version = nullptr;
    std::map<std::string, YamlValue> given;
    for (const auto& entry : *entries) {
      static const std::vector<std::string_view> kKeys = {
          "version", "community", "user", "auth_protocol", "auth_passphrase", "privacy_protocol", "privacy_passphrase"};
      if (std::find(kKeys.begin(), kKeys.end(), entry.key) == kKeys.end()) {
        read_.unknown_key(entry, kKeys);
        continue;
      }
      given.emplace(entry.key, entry.value);
      if (entry.key == "version") version = &given.at("version");
    }
    if (!version) {
      read_.missing(named.value, "version");
      return std::nullopt;
    }
    const auto chosen = read_.choice(*version, {"2c", "3"});
    if (!chosen) return std::nullopt;
    const auto text = [&](const char* key, bool required) -> std::string {
      const auto found = given.find(key);
      if (found == given.end()) {
        if (required) read_.missing(named.value, key);
        return {};
      }
      return read_.non_empty_string(found->second).value_or("");
    };
    const auto refuse = [&](const char* key, const char* why) {
      if (const auto found = given.find(key); found != given.end()) read_.fail(found->second, why);
    };
    if (*chosen == "2c") {
      credential.version = SnmpVersion::V2c;
      credential.community = text("community", true);
      for (const char* key : {"user", "auth_protocol", "auth_passphrase", "privacy_protocol", "privacy_passphrase"}) {
        refuse(key, "belongs to version 3; version 2c takes a community");
      }
      return credential;
    }
    credential.version = SnmpVersion::V3;
    refuse("community", "belongs to version 2c; version 3 takes a user");
    credential.user = text("user", true);
    if (const auto found = given.find("auth_protocol"); found != given.end()) {
      credential.auth_protocol =
          read_.choice(found->second, {"md5", "sha", "sha224", "sha256", "sha384", "sha512"}).value_or("");
    } else {
      read_.missing(named.value, "auth_protocol");
    }
    credential.auth_passphrase = passphrase(given, named, "auth_passphrase", true);
    if (const auto found = given.find("privacy_protocol"); found != given.end()) {
      credential.privacy_protocol = read_.choice(found->second, {"des", "aes"}).value_or("");
      credential.privacy_passphrase = passphrase(given, named, "privacy_passphrase", true);
    } else {
      refuse("privacy_passphrase", "needs privacy_protocol (des or aes)");
    }
    return credential;
  }

  std::string passphrase(const std::map<std::string, YamlValue>& given, const YamlEntry& named, const char* key,
                         bool required) {
    const auto found = given.find(key);
    if (found == given.end()) {
      if (required) read_.missing(named.value, key);
      return {};
    }
    auto value = read_.non_empty_string(found->second);
    if (value && value->size() < kMinPassphrase) {
      read_.fail(found->second,
                 fmt::format("is {} characters; SNMPv3 passphrases have at least {}", value->size(), kMinPassphrase));
      return {};
    }
    return value.value_or("");
  }

  YamlReader read_;
};

}  // namespace

SnmpCredentialsInvalid::SnmpCredentialsInvalid(std::vector<YamlError> errors)
    : std::runtime_error(join_errors(errors)), errors_(std::move(errors)) {}

SnmpCredentials load_snmp_credentials_text(std::string_view yaml_text, const std::string& file_name) {
  YamlErrors errors(file_name);
  const auto node = parse_yaml(yaml_text, errors);
  SnmpCredentials credentials;
  if (node) credentials = CredentialsReader(errors).read(*node);
  if (!errors.empty()) throw SnmpCredentialsInvalid(errors.take_sorted());
  return credentials;
}

SnmpCredentials load_snmp_credentials_file(const std::string& path) {
  YamlErrors errors(path);
  const auto text = read_input_file(errors, "the SNMP credentials file");
  if (!text) throw SnmpCredentialsInvalid(errors.take_sorted());
  return load_snmp_credentials_text(*text, path);
}

}  // namespace tusk
