// One SNMP conversation with one switch, through net-snmp's library (its single-session API, so
// each poller thread owns its session). Everything a switch sends is bounded before use: each
// request waits at most `timeout` × (1 + retries), a walk stops at `max_rows` values, at its
// deadline, or at an OID that does not grow (an agent that loops), and text values are cut to
// kMaxSnmpText bytes. A switch that never answers costs its timeouts and nothing more.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "controller/switches/snmp_credentials.hpp"

namespace tusk {

using SnmpOid = std::vector<std::uint32_t>;

// "1.3.6.1.2.1.31.1.1.1.1"
SnmpOid parse_oid(std::string_view dotted);
std::string oid_text(const SnmpOid& oid);
// Whether `oid` lies under `root` (and is not `root` itself).
bool oid_under(const SnmpOid& oid, const SnmpOid& root);

inline constexpr std::size_t kMaxSnmpText = 255;

struct SnmpValue {
  enum class Type { Number, Text, Absent };  // Absent: noSuchObject, noSuchInstance, endOfMibView
  SnmpOid oid;
  Type type = Type::Absent;
  std::uint64_t number = 0;  // INTEGER (as unsigned when not negative), Counter32/64, Gauge, TimeTicks
  std::string text;          // OCTET STRING (bytes as sent, at most kMaxSnmpText), IpAddress as dotted quad
  bool negative = false;     // an INTEGER below zero: `number` is then 0
};

struct SnmpTarget {
  std::string device;   // for messages: "switch l1 (198.18.3.12)"
  std::string address;  // IPv4
  std::uint16_t port = 161;
  SnmpCredential credential;
  std::chrono::milliseconds timeout{2000};  // a busy switch control plane answers within it
  int retries = 2;
};

// A switch that cannot be asked (unreachable, refused, wrong credentials, an error status).
class SnmpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SnmpWalk {
  std::vector<SnmpValue> values;
  bool truncated = false;  // stopped at max_rows or the deadline before the subtree's end
  std::string why_truncated;
};

class SnmpSession {
 public:
  // Throws SnmpError (with the switch and the library's reason) when the session cannot be made;
  // an SNMPv3 session discovers the switch's engine here, which may time out.
  explicit SnmpSession(const SnmpTarget& target);
  ~SnmpSession();
  SnmpSession(const SnmpSession&) = delete;
  SnmpSession& operator=(const SnmpSession&) = delete;

  // The values of `oids`, in their order (Absent where the switch has none). Throws SnmpError.
  std::vector<SnmpValue> get(const std::vector<SnmpOid>& oids);

  // Everything under `root`, by GETBULK, at most `max_rows` values, until `deadline`. Throws
  // SnmpError when the first request fails; a later failure ends the walk as truncated.
  SnmpWalk walk(const SnmpOid& root, std::size_t max_rows, std::chrono::steady_clock::time_point deadline);

  const std::string& name() const { return name_; }

 private:
  struct Handle;
  std::unique_ptr<Handle> handle_;
  std::string name_;
};

}  // namespace tusk
