#include "controller/switches/snmp_session.hpp"

// net-snmp's headers must come in this order: the configuration first.
// clang-format off
#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>
// clang-format on

#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace tusk {
namespace {

// Values one GETBULK asks for: a switch's answer stays within one UDP datagram of ordinary size.
constexpr long kBulkRepetitions = 32;
// OIDs per GET request.
constexpr std::size_t kOidsPerGet = 24;

// The library's global state (its MIB tree, the USM user list, the crypto) is set up once, reads
// no configuration or MIB files (every OID here is numeric) and writes no persistent state, and
// is guarded: net-snmp's session creation and v3 user list are not thread-safe.
std::mutex& library_mutex() {
  static std::mutex mutex;
  return mutex;
}

// How many open SNMPv3 sessions name each user, under library_mutex(). The library keeps a user's
// keys in one process-wide list that every session of that name reads as it sends and receives,
// outside the mutex: a session closed on one thread must not take them from a request under way on
// another (switches read in parallel, maybe sharing an engine ID: a lab's read of l2 failed "USM
// unknown security name" while the read of another switch closed).
std::map<std::string, int>& open_v3_users() {
  static std::map<std::string, int> users;
  return users;
}

void init_library_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    setenv("MIBS", "", 0);  // no MIB files: the library would read (and warn about) the host's
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_PERSIST_STATE, 1);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_QUICK_PRINT, 1);
    snmp_disable_log();  // errors come back through the session, with the switch named
    init_snmp("tusk-controller");
  });
}

struct PduFree {
  void operator()(netsnmp_pdu* pdu) const { snmp_free_pdu(pdu); }
};
using PduOwner = std::unique_ptr<netsnmp_pdu, PduFree>;

std::string session_error(void* session) {
  char* text = nullptr;
  int library_error = 0, system_error = 0;
  snmp_sess_error(session, &library_error, &system_error, &text);
  std::string out = text ? text : "unknown error";
  free(text);  // NOLINT: the library allocates it with malloc
  return out;
}

const oid* auth_protocol(const std::string& name, std::size_t& length) {
  struct Known {
    const char* name;
    const oid* protocol;
    std::size_t length;
  };
  static const Known kKnown[] = {
      {"md5", usmHMACMD5AuthProtocol, USM_AUTH_PROTO_MD5_LEN},
      {"sha", usmHMACSHA1AuthProtocol, USM_AUTH_PROTO_SHA_LEN},
      {"sha224", usmHMAC128SHA224AuthProtocol, OID_LENGTH(usmHMAC128SHA224AuthProtocol)},
      {"sha256", usmHMAC192SHA256AuthProtocol, OID_LENGTH(usmHMAC192SHA256AuthProtocol)},
      {"sha384", usmHMAC256SHA384AuthProtocol, OID_LENGTH(usmHMAC256SHA384AuthProtocol)},
      {"sha512", usmHMAC384SHA512AuthProtocol, OID_LENGTH(usmHMAC384SHA512AuthProtocol)},
  };
  for (const auto& known : kKnown) {
    if (name == known.name) {
      length = known.length;
      return known.protocol;
    }
  }
  return nullptr;
}

void set_v3(netsnmp_session& session, const SnmpCredential& credential, const std::string& who) {
  session.version = SNMP_VERSION_3;
  session.securityName = const_cast<char*>(credential.user.c_str());
  session.securityNameLen = credential.user.size();
  session.securityLevel = credential.privacy_protocol.empty() ? SNMP_SEC_LEVEL_AUTHNOPRIV : SNMP_SEC_LEVEL_AUTHPRIV;
  std::size_t auth_length = 0;
  const oid* auth = auth_protocol(credential.auth_protocol, auth_length);
  if (!auth) throw SnmpError(fmt::format("{}: unknown auth_protocol '{}'", who, credential.auth_protocol));
  session.securityAuthProto = const_cast<oid*>(auth);
  session.securityAuthProtoLen = auth_length;
  session.securityAuthKeyLen = USM_AUTH_KU_LEN;
  const auto& pass = credential.auth_passphrase;
  if (generate_Ku(session.securityAuthProto, static_cast<u_int>(session.securityAuthProtoLen),
                  reinterpret_cast<const u_char*>(pass.data()), pass.size(), session.securityAuthKey,
                  &session.securityAuthKeyLen) != SNMPERR_SUCCESS) {
    throw SnmpError(fmt::format("{}: cannot derive the auth key of user '{}'", who, credential.user));
  }
  if (credential.privacy_protocol.empty()) return;
  if (credential.privacy_protocol == "aes") {
    session.securityPrivProto = const_cast<oid*>(usmAESPrivProtocol);
    session.securityPrivProtoLen = USM_PRIV_PROTO_AES_LEN;
  } else {
    session.securityPrivProto = const_cast<oid*>(usmDESPrivProtocol);
    session.securityPrivProtoLen = USM_PRIV_PROTO_DES_LEN;
  }
  session.securityPrivKeyLen = USM_PRIV_KU_LEN;
  const auto& privacy = credential.privacy_passphrase;
  if (generate_Ku(session.securityAuthProto, static_cast<u_int>(session.securityAuthProtoLen),
                  reinterpret_cast<const u_char*>(privacy.data()), privacy.size(), session.securityPrivKey,
                  &session.securityPrivKeyLen) != SNMPERR_SUCCESS) {
    throw SnmpError(fmt::format("{}: cannot derive the privacy key of user '{}'", who, credential.user));
  }
}

SnmpValue value_of(const netsnmp_variable_list& variable) {
  SnmpValue value;
  const std::size_t length = std::min<std::size_t>(variable.name_length, MAX_OID_LEN);
  value.oid.reserve(length);
  for (std::size_t i = 0; i < length; ++i) value.oid.push_back(static_cast<std::uint32_t>(variable.name[i]));
  switch (variable.type) {
    case ASN_INTEGER:
      if (variable.val.integer && *variable.val.integer >= 0) {
        value.number = static_cast<std::uint64_t>(*variable.val.integer);
      } else {
        value.negative = true;
      }
      value.type = SnmpValue::Type::Number;
      break;
    case ASN_COUNTER:
    case ASN_GAUGE:
    case ASN_TIMETICKS:
      if (variable.val.integer) value.number = static_cast<std::uint64_t>(*variable.val.integer) & 0xffffffffu;
      value.type = SnmpValue::Type::Number;
      break;
    case ASN_COUNTER64:
      if (variable.val.counter64) {
        value.number = (static_cast<std::uint64_t>(variable.val.counter64->high) << 32) |
                       (variable.val.counter64->low & 0xffffffffu);
      }
      value.type = SnmpValue::Type::Number;
      break;
    case ASN_OCTET_STR:
      if (variable.val.string) {
        value.text.assign(reinterpret_cast<const char*>(variable.val.string),
                          std::min<std::size_t>(variable.val_len, kMaxSnmpText));
      }
      value.type = SnmpValue::Type::Text;
      break;
    case ASN_IPADDRESS:
      if (variable.val.string && variable.val_len == 4) {
        const u_char* b = variable.val.string;
        value.text = fmt::format("{}.{}.{}.{}", b[0], b[1], b[2], b[3]);
      }
      value.type = SnmpValue::Type::Text;
      break;
    default:  // noSuchObject, noSuchInstance, endOfMibView, and types no counter has
      value.type = SnmpValue::Type::Absent;
      break;
  }
  return value;
}

}  // namespace

SnmpOid parse_oid(std::string_view dotted) {
  SnmpOid out;
  std::uint64_t part = 0;
  bool digits = false;
  for (const char c : dotted) {
    if (c == '.') {
      if (digits) out.push_back(static_cast<std::uint32_t>(part));
      part = 0;
      digits = false;
    } else if (c >= '0' && c <= '9' && part < 0xffffffffu) {
      part = part * 10 + static_cast<std::uint64_t>(c - '0');
      digits = true;
    } else {
      throw std::invalid_argument(fmt::format("'{}' is not a numeric OID", dotted));
    }
  }
  if (digits) out.push_back(static_cast<std::uint32_t>(part));
  return out;
}

std::string oid_text(const SnmpOid& oid) {
  return fmt::format("{}", fmt::join(oid, "."));
}

bool oid_under(const SnmpOid& oid, const SnmpOid& root) {
  return oid.size() > root.size() && std::equal(root.begin(), root.end(), oid.begin());
}

struct SnmpSession::Handle {
  void* session = nullptr;
  std::string v3_user;  // counted in open_v3_users() while open
  ~Handle() {
    if (!session) return;
    std::lock_guard<std::mutex> lock(library_mutex());
    bool last_of_its_user = false;
    if (!v3_user.empty()) {
      auto& users = open_v3_users();
      const auto counted = users.find(v3_user);
      last_of_its_user = counted == users.end() || --counted->second <= 0;
      if (last_of_its_user && counted != users.end()) users.erase(counted);
    }
    // The library keeps an SNMPv3 user's keys per engine in a process-wide list and would reuse
    // them for the next session as that user: a changed passphrase, or another credentials entry
    // of the same user name, must authenticate with its own keys. Once no session of that name
    // is open (see open_v3_users), its keys go for every engine its sessions reached.
    if (last_of_its_user) {
      std::vector<usmUser*> keys;
      for (usmUser* user = usm_get_userList(); user; user = user->next) {
        if (user->name && v3_user == user->name) keys.push_back(user);
      }
      for (usmUser* user : keys) {
        usm_remove_user(user);
        usm_free_user(user);
      }
    }
    snmp_sess_close(session);
  }
  PduOwner request(int command, const std::vector<SnmpOid>& oids, const std::string& who) const {
    netsnmp_pdu* pdu = snmp_pdu_create(command);
    if (!pdu) throw SnmpError(fmt::format("{}: out of memory for a request", who));
    if (command == SNMP_MSG_GETBULK) {
      pdu->non_repeaters = 0;
      pdu->max_repetitions = kBulkRepetitions;
    }
    for (const auto& id : oids) {
      std::vector<oid> name(id.begin(), id.end());
      snmp_add_null_var(pdu, name.data(), name.size());
    }
    netsnmp_pdu* response = nullptr;
    const int status = snmp_sess_synch_response(session, pdu, &response);  // frees pdu
    PduOwner owned(response);
    if (status == STAT_TIMEOUT) throw SnmpError(fmt::format("{}: no answer (timed out)", who));
    if (status != STAT_SUCCESS || !response) throw SnmpError(fmt::format("{}: {}", who, session_error(session)));
    if (response->errstat != SNMP_ERR_NOERROR) {
      throw SnmpError(
          fmt::format("{}: the switch answered {}", who, snmp_errstring(static_cast<int>(response->errstat))));
    }
    return owned;
  }
};

SnmpSession::SnmpSession(const SnmpTarget& target)
    : handle_(std::make_unique<Handle>()), name_(fmt::format("switch {} ({})", target.device, target.address)) {
  init_library_once();
  netsnmp_session session;
  snmp_sess_init(&session);
  const std::string peer = fmt::format("udp:{}:{}", target.address, target.port);
  session.peername = const_cast<char*>(peer.c_str());
  session.timeout = static_cast<long>(std::chrono::duration_cast<std::chrono::microseconds>(target.timeout).count());
  session.retries = target.retries;
  const SnmpCredential& credential = target.credential;
  if (credential.version == SnmpVersion::V2c) {
    session.version = SNMP_VERSION_2c;
    session.community = reinterpret_cast<u_char*>(const_cast<char*>(credential.community.data()));
    session.community_len = credential.community.size();
  } else {
    set_v3(session, credential, name_);
  }
  std::lock_guard<std::mutex> lock(library_mutex());
  handle_->session = snmp_sess_open(&session);  // copies what it keeps
  if (!handle_->session) {
    char* text = nullptr;
    int library_error = 0, system_error = 0;
    snmp_error(&session, &library_error, &system_error, &text);
    const std::string why = text ? text : "unknown error";
    free(text);  // NOLINT: the library allocates it with malloc
    throw SnmpError(fmt::format("{}: cannot open an SNMP session: {}", name_, why));
  }
  if (credential.version != SnmpVersion::V2c) {
    handle_->v3_user = credential.user;
    ++open_v3_users()[handle_->v3_user];
  }
}

SnmpSession::~SnmpSession() = default;

std::vector<SnmpValue> SnmpSession::get(const std::vector<SnmpOid>& oids) {
  std::vector<SnmpValue> out;
  out.reserve(oids.size());
  for (std::size_t first = 0; first < oids.size(); first += kOidsPerGet) {
    const std::vector<SnmpOid> part(
        oids.begin() + static_cast<std::ptrdiff_t>(first),
        oids.begin() + static_cast<std::ptrdiff_t>(std::min(oids.size(), first + kOidsPerGet)));
    const PduOwner response = handle_->request(SNMP_MSG_GET, part, name_);
    std::size_t i = 0;
    for (const netsnmp_variable_list* v = response->variables; v && i < part.size(); v = v->next_variable, ++i) {
      SnmpValue value = value_of(*v);
      if (value.oid != part[i]) value = SnmpValue{part[i], SnmpValue::Type::Absent, 0, {}, false};
      out.push_back(std::move(value));
    }
    for (; i < part.size(); ++i) out.push_back(SnmpValue{part[i], SnmpValue::Type::Absent, 0, {}, false});
  }
  return out;
}

SnmpWalk SnmpSession::walk(const SnmpOid& root, std::size_t max_rows, std::chrono::steady_clock::time_point deadline) {
  SnmpWalk walk;
  SnmpOid next = root;
  while (true) {
    if (walk.values.size() >= max_rows) {
      walk.truncated = true;
      walk.why_truncated = fmt::format("more than {} values under {}", max_rows, oid_text(root));
      return walk;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      walk.truncated = true;
      walk.why_truncated = fmt::format("out of time after {} values under {}", walk.values.size(), oid_text(root));
      return walk;
    }
    PduOwner response;
    try {
      response = handle_->request(SNMP_MSG_GETBULK, {next}, name_);
    } catch (const SnmpError& error) {
      if (walk.values.empty()) throw;
      walk.truncated = true;
      walk.why_truncated = error.what();
      return walk;
    }
    bool advanced = false;
    for (const netsnmp_variable_list* v = response->variables; v; v = v->next_variable) {
      SnmpValue value = value_of(*v);
      if (value.type == SnmpValue::Type::Absent || !oid_under(value.oid, root)) return walk;  // the subtree's end
      // An agent that answers with an OID not past the last one would loop forever.
      if (!std::lexicographical_compare(next.begin(), next.end(), value.oid.begin(), value.oid.end())) {
        walk.truncated = true;
        walk.why_truncated = fmt::format("the switch went back to {} after {}", oid_text(value.oid), oid_text(next));
        return walk;
      }
      next = value.oid;
      advanced = true;
      walk.values.push_back(std::move(value));
      if (walk.values.size() >= max_rows) break;
    }
    if (!advanced) return walk;
  }
}

}  // namespace tusk
