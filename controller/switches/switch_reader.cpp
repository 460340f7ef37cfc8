#include "controller/switches/switch_reader.hpp"

#include <fmt/format.h>

#include <arpa/inet.h>

#include <algorithm>
#include <bit>
#include <map>

#include "common/clock.hpp"
#include "common/printable.hpp"

namespace tusk {
namespace {

const SnmpOid kIfName = parse_oid("1.3.6.1.2.1.31.1.1.1.1");
const SnmpOid kIfDescr = parse_oid("1.3.6.1.2.1.2.2.1.2");
const SnmpOid kIfXEntry = parse_oid("1.3.6.1.2.1.31.1.1.1");
const SnmpOid kIfEntry = parse_oid("1.3.6.1.2.1.2.2.1");
const SnmpOid kLldpLocPortEntry = parse_oid("1.0.8802.1.1.2.1.3.7.1");
const SnmpOid kLldpRemEntry = parse_oid("1.0.8802.1.1.2.1.4.1.1");
// IP-MIB: ipAdEntIfIndex (RFC 1213's ipAddrTable, indexed by the IPv4 address), and RFC 4293's
// ipAddressIfIndex (indexed by type 1, length 4, the address) for agents that dropped the old table.
const SnmpOid kIpAddrEntry = parse_oid("1.3.6.1.2.1.4.20.1");
const SnmpOid kIpAddressEntry = parse_oid("1.3.6.1.2.1.4.34.1");
constexpr std::uint32_t kIpAdEntIfIndex = 2, kIpAdEntNetMask = 3, kIpAddressIfIndex = 3;

// ifXTable columns: the 64-bit octets and packets, in and out.
enum IfXColumn : std::uint32_t {
  kHcInOctets = 6,
  kHcInUcast = 7,
  kHcInMulticast = 8,
  kHcInBroadcast = 9,
  kHcOutOctets = 10,
  kHcOutUcast = 11,
  kHcOutMulticast = 12,
  kHcOutBroadcast = 13,
};
// ifTable columns.
enum IfColumn : std::uint32_t {
  kOperStatus = 8,
  kInOctets = 10,
  kInUcast = 11,
  kInNUcast = 12,
  kInDiscards = 13,
  kInErrors = 14,
  kOutOctets = 16,
  kOutUcast = 17,
  kOutNUcast = 18,
  kOutDiscards = 19,
  kOutErrors = 20,
};
// LLDP-MIB columns (lldpLocPortTable, lldpRemTable).
constexpr std::uint32_t kLocPortIdSubtype = 2, kLocPortId = 3, kLocPortDesc = 4;
constexpr std::uint32_t kRemChassisIdSubtype = 4, kRemChassisId = 5, kRemPortIdSubtype = 6, kRemPortId = 7,
                        kRemPortDesc = 8, kRemSysName = 9;
// LLDP's id subtypes whose value is a MAC address or a network address.
constexpr std::uint64_t kChassisMac = 4, kChassisNetwork = 5, kPortMac = 3, kPortNetwork = 4, kPortIfName = 5;

SnmpOid column_oid(const SnmpOid& entry, std::uint32_t column_number, std::uint32_t index) {
  SnmpOid out = entry;
  out.push_back(column_number);
  out.push_back(index);
  return out;
}

std::string hex_bytes(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    if (!out.empty()) out += ':';
    out += fmt::format("{:02x}", static_cast<unsigned char>(c));
  }
  return out;
}

// An LLDP id as people read it: MAC addresses in hex, IPv4 network addresses dotted, else text.
std::string id_text(std::string_view bytes, std::uint64_t subtype, std::uint64_t mac_subtype,
                    std::uint64_t net_subtype) {
  if (subtype == mac_subtype && bytes.size() == 6) return hex_bytes(bytes);
  if (subtype == net_subtype && bytes.size() == 5 && bytes[0] == 1) {
    return fmt::format("{}.{}.{}.{}", static_cast<unsigned char>(bytes[1]), static_cast<unsigned char>(bytes[2]),
                       static_cast<unsigned char>(bytes[3]), static_cast<unsigned char>(bytes[4]));
  }
  return printable(bytes);
}

// Rows of one table column, by the index after the column (one or more sub-identifiers).
struct ColumnRows {
  std::map<SnmpOid, SnmpValue> rows;
};

ColumnRows walk_column(SnmpSession& session, const SnmpOid& entry, std::uint32_t column_number,
                       const SwitchReadLimits& limits, std::chrono::steady_clock::time_point deadline,
                       SwitchReading& reading) {
  SnmpOid root = entry;
  root.push_back(column_number);
  SnmpWalk walk = session.walk(root, limits.max_rows, deadline);
  if (walk.truncated) reading.warnings.push_back(fmt::format("{}: {}", session.name(), walk.why_truncated));
  ColumnRows out;
  for (auto& value : walk.values) {
    SnmpOid index(value.oid.begin() + static_cast<std::ptrdiff_t>(root.size()), value.oid.end());
    out.rows.emplace(std::move(index), std::move(value));
  }
  return out;
}

// Port name -> ifIndex, from ifName (ifDescr where a switch has no ifName).
std::map<std::string, std::uint32_t> port_indexes(SnmpSession& session, const SwitchReadLimits& limits,
                                                  std::chrono::steady_clock::time_point deadline,
                                                  SwitchReading& reading) {
  std::map<std::string, std::uint32_t> out;
  for (const SnmpOid* table : {&kIfName, &kIfDescr}) {
    SnmpOid entry(table->begin(), table->end() - 1);
    const ColumnRows names = walk_column(session, entry, table->back(), limits, deadline, reading);
    for (const auto& [index, value] : names.rows) {
      if (index.size() == 1 && value.type == SnmpValue::Type::Text) out.emplace(printable(value.text), index[0]);
    }
    if (!out.empty()) break;
  }
  return out;
}

std::uint64_t number_at(const std::vector<SnmpValue>& values, std::size_t i) {
  return i < values.size() && values[i].type == SnmpValue::Type::Number ? values[i].number : 0;
}

SwitchPortCounters read_port(SnmpSession& session, std::uint32_t index) {
  const std::vector<SnmpOid> oids = {
      column_oid(kIfXEntry, kHcInOctets, index),     column_oid(kIfXEntry, kHcInUcast, index),
      column_oid(kIfXEntry, kHcInMulticast, index),  column_oid(kIfXEntry, kHcInBroadcast, index),
      column_oid(kIfXEntry, kHcOutOctets, index),    column_oid(kIfXEntry, kHcOutUcast, index),
      column_oid(kIfXEntry, kHcOutMulticast, index), column_oid(kIfXEntry, kHcOutBroadcast, index),
      column_oid(kIfEntry, kInDiscards, index),      column_oid(kIfEntry, kInErrors, index),
      column_oid(kIfEntry, kOutDiscards, index),     column_oid(kIfEntry, kOutErrors, index),
      column_oid(kIfEntry, kOperStatus, index),
  };
  const auto values = session.get(oids);
  SwitchPortCounters port;
  port.in_discards = number_at(values, 8);
  port.in_errors = number_at(values, 9);
  port.out_discards = number_at(values, 10);
  port.out_errors = number_at(values, 11);
  if (values.size() > 12 && values[12].type == SnmpValue::Type::Number) port.oper_up = values[12].number == 1;
  if (values.size() > 4 && values[0].type == SnmpValue::Type::Number && values[4].type == SnmpValue::Type::Number) {
    port.in_octets = number_at(values, 0);
    port.in_packets = number_at(values, 1) + number_at(values, 2) + number_at(values, 3);
    port.out_octets = number_at(values, 4);
    port.out_packets = number_at(values, 5) + number_at(values, 6) + number_at(values, 7);
    return port;
  }
  // No ifXTable (an old agent): the 32-bit counters, which wrap.
  const auto narrow = session.get({column_oid(kIfEntry, kInOctets, index), column_oid(kIfEntry, kInUcast, index),
                                   column_oid(kIfEntry, kInNUcast, index), column_oid(kIfEntry, kOutOctets, index),
                                   column_oid(kIfEntry, kOutUcast, index), column_oid(kIfEntry, kOutNUcast, index)});
  port.wide = false;
  port.in_octets = number_at(narrow, 0);
  port.in_packets = number_at(narrow, 1) + number_at(narrow, 2);
  port.out_octets = number_at(narrow, 3);
  port.out_packets = number_at(narrow, 4) + number_at(narrow, 5);
  return port;
}

// lldpLocPortNum -> the port's name: the local port id when it is an interface name, else the
// ifName of that number (lldpLocPortNum is the ifIndex on most agents), else its description.
std::map<std::uint32_t, std::string> lldp_local_ports(SnmpSession& session,
                                                      const std::map<std::string, std::uint32_t>& indexes,
                                                      const SwitchReadLimits& limits,
                                                      std::chrono::steady_clock::time_point deadline,
                                                      SwitchReading& reading) {
  const auto subtypes = walk_column(session, kLldpLocPortEntry, kLocPortIdSubtype, limits, deadline, reading);
  const auto ids = walk_column(session, kLldpLocPortEntry, kLocPortId, limits, deadline, reading);
  const auto descriptions = walk_column(session, kLldpLocPortEntry, kLocPortDesc, limits, deadline, reading);
  std::map<std::uint32_t, std::string> by_index;
  for (const auto& [name, index] : indexes) by_index.emplace(index, name);
  std::map<std::uint32_t, std::string> out;
  for (const auto& [index, id] : ids.rows) {
    if (index.size() != 1) continue;
    const auto subtype = subtypes.rows.find(index);
    if (subtype != subtypes.rows.end() && subtype->second.number == kPortIfName && !id.text.empty()) {
      out.emplace(index[0], printable(id.text));
    } else if (const auto named = by_index.find(index[0]); named != by_index.end()) {
      out.emplace(index[0], named->second);
    } else if (const auto description = descriptions.rows.find(index); description != descriptions.rows.end()) {
      out.emplace(index[0], printable(description->second.text));
    }
  }
  return out;
}

void read_lldp(SnmpSession& session, const std::map<std::string, std::uint32_t>& indexes,
               const SwitchReadLimits& limits, std::chrono::steady_clock::time_point deadline, SwitchReading& reading) {
  const auto local = lldp_local_ports(session, indexes, limits, deadline, reading);
  std::map<std::uint32_t, ColumnRows> columns;
  for (const std::uint32_t c :
       {kRemChassisIdSubtype, kRemChassisId, kRemPortIdSubtype, kRemPortId, kRemPortDesc, kRemSysName}) {
    columns[c] = walk_column(session, kLldpRemEntry, c, limits, deadline, reading);
  }
  const auto text_of = [&](std::uint32_t c, const SnmpOid& index) -> const std::string* {
    const auto found = columns[c].rows.find(index);
    return found == columns[c].rows.end() ? nullptr : &found->second.text;
  };
  const auto number_of = [&](std::uint32_t c, const SnmpOid& index) -> std::uint64_t {
    const auto found = columns[c].rows.find(index);
    return found == columns[c].rows.end() ? 0 : found->second.number;
  };
  for (const auto& [index, port_id] : columns[kRemPortId].rows) {
    if (index.size() != 3) continue;  // lldpRemTimeMark, lldpRemLocalPortNum, lldpRemIndex
    SwitchLldpNeighbour neighbour;
    const auto named = local.find(index[1]);
    neighbour.local_port = named != local.end() ? named->second : fmt::format("port {}", index[1]);
    neighbour.port_id = id_text(port_id.text, number_of(kRemPortIdSubtype, index), kPortMac, kPortNetwork);
    if (const auto* d = text_of(kRemPortDesc, index)) neighbour.port_description = printable(*d);
    if (const auto* s = text_of(kRemSysName, index)) neighbour.system_name = printable(*s);
    if (const auto* c = text_of(kRemChassisId, index)) {
      neighbour.chassis_id = id_text(*c, number_of(kRemChassisIdSubtype, index), kChassisMac, kChassisNetwork);
    }
    reading.lldp.push_back(std::move(neighbour));
  }
  reading.lldp_read = true;
}

// Each port's IPv4 addresses, so a discovered topology places the hops a trace meets.
void read_port_addresses(SnmpSession& session, const std::map<std::string, std::uint32_t>& indexes,
                         const SwitchReadLimits& limits, std::chrono::steady_clock::time_point deadline,
                         SwitchReading& reading) {
  std::map<std::uint64_t, const std::string*> names;
  for (const auto& [name, index] : indexes) names.emplace(index, &name);
  const auto add = [&](const SnmpOid& address, const SnmpValue& if_index) {
    if (address.size() != 4 || if_index.type != SnmpValue::Type::Number || address[0] == 127) return;
    if (std::any_of(address.begin(), address.end(), [](auto octet) { return octet > 255; })) return;
    const auto port = names.find(if_index.number);
    if (port == names.end()) return;
    auto& addresses = reading.port_addresses[*port->second];
    const std::string dotted = fmt::format("{}.{}.{}.{}", address[0], address[1], address[2], address[3]);
    if (std::find(addresses.begin(), addresses.end(), dotted) == addresses.end()) addresses.push_back(dotted);
  };
  for (const auto& [index, value] :
       walk_column(session, kIpAddrEntry, kIpAdEntIfIndex, limits, deadline, reading).rows) {
    add(index, value);
  }
  if (!reading.port_addresses.empty()) {
    // Each address's mask, so a discovered topology knows which cable a traced hop's address is on.
    for (const auto& [index, value] :
         walk_column(session, kIpAddrEntry, kIpAdEntNetMask, limits, deadline, reading).rows) {
      in_addr mask{};
      if (index.size() != 4 || value.type != SnmpValue::Type::Text ||
          inet_pton(AF_INET, value.text.c_str(), &mask) != 1) {
        continue;
      }
      const std::uint32_t bits = ntohl(mask.s_addr);
      const auto length = static_cast<unsigned>(std::popcount(bits));
      if (bits != (length == 0 ? 0u : ~0u << (32 - length))) continue;  // not a prefix mask
      reading.prefix_lengths[fmt::format("{}.{}.{}.{}", index[0], index[1], index[2], index[3])] = length;
    }
    return;
  }
  for (const auto& [index, value] :
       walk_column(session, kIpAddressEntry, kIpAddressIfIndex, limits, deadline, reading).rows) {
    if (index.size() == 6 && index[0] == 1 && index[1] == 4) add(SnmpOid(index.begin() + 2, index.end()), value);
  }
}

}  // namespace

SwitchReading read_switch(const SwitchQuery& query, const SwitchReadLimits& limits) {
  SwitchReading reading;
  reading.device = query.target.device;
  reading.address = query.target.address;
  reading.time_ns = realtime_ns();
  const auto deadline = std::chrono::steady_clock::now() + limits.deadline;
  try {
    SnmpSession session(query.target);
    const auto indexes = port_indexes(session, limits, deadline, reading);
    for (const auto& port : query.ports) {
      const auto found = indexes.find(port);
      if (found == indexes.end()) {
        reading.missing_ports.push_back(port);
        continue;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        reading.warnings.push_back(fmt::format("{}: out of time before port {}", session.name(), port));
        break;
      }
      reading.ports.emplace(port, read_port(session, found->second));
    }
    if (query.lldp) read_lldp(session, indexes, limits, deadline, reading);
    if (query.addresses) read_port_addresses(session, indexes, limits, deadline, reading);
  } catch (const SnmpError& error) {
    reading.error = error.what();
  }
  return reading;
}

}  // namespace tusk
