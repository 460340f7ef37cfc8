#include "agent/dpdk/neighbour.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "agent/dpdk/wire_bytes.hpp"

namespace tusk::dpdk {
namespace {

using wire::get16;
using wire::get32;
using wire::internet_checksum;
using wire::put16;
using wire::put32;

constexpr std::uint16_t kArpRequest = 1;
constexpr std::uint16_t kArpReply = 2;
constexpr std::size_t kArpAt = kEthernetHeaderLength;

std::uint32_t mask_of(std::uint8_t prefix_length) {
  return prefix_length == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix_length);
}

void write_ethernet(std::uint8_t* frame, const MacAddress& dst, const MacAddress& src, std::uint16_t type) {
  std::copy(dst.begin(), dst.end(), frame);
  std::copy(src.begin(), src.end(), frame + 6);
  put16(frame + 12, type);
}

void write_arp(std::uint8_t* frame, std::uint16_t operation, const MacAddress& sender_mac, std::uint32_t sender,
               const MacAddress& target_mac, std::uint32_t target) {
  std::uint8_t* arp = frame + kArpAt;
  put16(arp, 1);           // hardware: Ethernet
  put16(arp + 2, 0x0800);  // protocol: IPv4
  arp[4] = 6;
  arp[5] = 4;
  put16(arp + 6, operation);
  std::copy(sender_mac.begin(), sender_mac.end(), arp + 8);
  put32(arp + 14, sender);
  std::copy(target_mac.begin(), target_mac.end(), arp + 18);
  put32(arp + 24, target);
}

std::size_t padded(std::uint8_t* frame, std::size_t length) {
  if (length < kMinFrameLength) std::memset(frame + length, 0, kMinFrameLength - length);
  return std::max(length, kMinFrameLength);
}

// An ICMP echo request to us (untagged IPv4, no fragments) becomes its echo reply.
std::size_t answer_ping(const Ipv4Interface& interface, const std::uint8_t* frame, std::size_t length,
                        std::uint8_t* reply) {
  if (length < kEthernetHeaderLength + 20 || get16(frame + 12) != kIpv4EtherType) return 0;
  const std::uint8_t* ip = frame + kEthernetHeaderLength;
  const std::size_t ip_header = static_cast<std::size_t>(ip[0] & 0x0F) * 4;
  if ((ip[0] >> 4) != 4 || ip_header < 20 || ip[9] != IPPROTO_ICMP || get32(ip + 16) != interface.address) return 0;
  if ((get16(ip + 6) & 0x3FFFu) != 0) return 0;  // fragments: not worth reassembling for a ping
  const std::size_t total = get16(ip + 2);
  if (total < ip_header + 8 || kEthernetHeaderLength + total > length) return 0;
  if (internet_checksum(ip, ip_header) != 0) return 0;
  const std::uint8_t* icmp = ip + ip_header;
  if (icmp[0] != ICMP_ECHO || icmp[1] != 0) return 0;

  const std::size_t frame_length = kEthernetHeaderLength + total;
  std::memcpy(reply, frame, frame_length);
  MacAddress asker{};
  std::copy(frame + 6, frame + 12, asker.begin());
  write_ethernet(reply, asker, interface.mac, kIpv4EtherType);
  std::uint8_t* reply_ip = reply + kEthernetHeaderLength;
  put32(reply_ip + 16, get32(ip + 12));
  put32(reply_ip + 12, interface.address);
  reply_ip[8] = 64;
  put16(reply_ip + 10, 0);
  put16(reply_ip + 10, internet_checksum(reply_ip, ip_header));
  std::uint8_t* reply_icmp = reply_ip + ip_header;
  reply_icmp[0] = ICMP_ECHOREPLY;
  put16(reply_icmp + 2, 0);
  put16(reply_icmp + 2, internet_checksum(reply_icmp, total - ip_header));
  return padded(reply, frame_length);
}

}  // namespace

bool Ipv4Interface::on_subnet(std::uint32_t other) const {
  const std::uint32_t mask = mask_of(prefix_length);
  return (other & mask) == (address & mask);
}

std::string cidr_text(const Ipv4Interface& interface) {
  return fmt::format("{}/{}", path::ipv4_to_string(interface.address), interface.prefix_length);
}

std::string to_string(const Ipv4Interface& interface) {
  std::string text = cidr_text(interface);
  if (interface.gateway != 0) text += " gw " + path::ipv4_to_string(interface.gateway);
  return text;
}

Ipv4Interface parse_ipv4_interface(const std::string& text) {
  const auto comma = text.find(',');
  const std::string cidr = text.substr(0, comma);
  const auto slash = cidr.find('/');
  if (slash == std::string::npos) {
    throw std::invalid_argument(
        fmt::format("'{}': give the port's address with its prefix, e.g. 192.168.101.11/24", text));
  }
  Ipv4Interface interface;
  const auto address = path::parse_ipv4(cidr.substr(0, slash));
  if (!address)
    throw std::invalid_argument(fmt::format("'{}': '{}' is not an IPv4 address", text, cidr.substr(0, slash)));
  interface.address = *address;
  const std::string prefix = cidr.substr(slash + 1);
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  if (prefix.empty() || prefix.size() > 2 || !std::all_of(prefix.begin(), prefix.end(), is_digit) ||
      std::stoi(prefix) < 1 || std::stoi(prefix) > 32) {
    throw std::invalid_argument(fmt::format("'{}': prefix length '{}' is not 1..32", text, prefix));
  }
  interface.prefix_length = static_cast<std::uint8_t>(std::stoi(prefix));
  const std::uint32_t host_bits = ~mask_of(interface.prefix_length);
  if (interface.prefix_length <= 30 &&
      ((interface.address & host_bits) == 0 || (interface.address & host_bits) == host_bits)) {
    throw std::invalid_argument(fmt::format("'{}': {} is the subnet's network or broadcast address, not a host's", text,
                                            cidr.substr(0, slash)));
  }
  if (comma != std::string::npos) {
    const std::string option = text.substr(comma + 1);
    if (option.rfind("gw=", 0) != 0) {
      throw std::invalid_argument(fmt::format("'{}': after the address comes only gw=GATEWAY, not '{}'", text, option));
    }
    const auto gateway = path::parse_ipv4(option.substr(3));
    if (!gateway)
      throw std::invalid_argument(fmt::format("'{}': gateway '{}' is not an IPv4 address", text, option.substr(3)));
    if (!interface.on_subnet(*gateway) || *gateway == interface.address) {
      throw std::invalid_argument(fmt::format(
          "'{}': gateway {} is not another host on {}/{}", text, option.substr(3),
          path::ipv4_to_string(interface.address & mask_of(interface.prefix_length)), interface.prefix_length));
    }
    interface.gateway = *gateway;
  }
  return interface;
}

std::uint32_t next_hop(const Ipv4Interface& interface, std::uint32_t destination) {
  if (interface.on_subnet(destination)) return destination;
  if (interface.gateway == 0) {
    throw std::invalid_argument(fmt::format("{} is not on this port's subnet ({}) and the port has no gateway",
                                            path::ipv4_to_string(destination), to_string(interface)));
  }
  return interface.gateway;
}

std::optional<ArpPacket> parse_arp(const std::uint8_t* frame, std::size_t length) {
  if (length < kArpFrameLength || get16(frame + 12) != kArpEtherType) return std::nullopt;
  const std::uint8_t* arp = frame + kArpAt;
  if (get16(arp) != 1 || get16(arp + 2) != 0x0800 || arp[4] != 6 || arp[5] != 4) return std::nullopt;
  ArpPacket packet;
  packet.operation = get16(arp + 6);
  std::copy(arp + 8, arp + 14, packet.sender_mac.begin());
  packet.sender_address = get32(arp + 14);
  std::copy(arp + 18, arp + 24, packet.target_mac.begin());
  packet.target_address = get32(arp + 24);
  return packet;
}

std::size_t write_arp_request(const Ipv4Interface& interface, std::uint32_t target, std::uint8_t* frame) {
  constexpr MacAddress kBroadcast{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  write_ethernet(frame, kBroadcast, interface.mac, kArpEtherType);
  write_arp(frame, kArpRequest, interface.mac, interface.address, MacAddress{}, target);
  return padded(frame, kArpFrameLength);
}

bool may_ask_for_us(const Ipv4Interface& interface, const std::uint8_t* frame, std::size_t length) {
  if (interface.address == 0 || length < kArpFrameLength) return false;
  const std::uint16_t ethertype = get16(frame + 12);
  if (ethertype == kArpEtherType) return get32(frame + kArpAt + 24) == interface.address;
  return ethertype == kIpv4EtherType && frame[kEthernetHeaderLength + 9] == IPPROTO_ICMP &&
         get32(frame + kEthernetHeaderLength + 16) == interface.address;
}

std::size_t answer_for_us(const Ipv4Interface& interface, const std::uint8_t* frame, std::size_t length,
                          std::uint8_t* reply) {
  if (interface.address == 0) return 0;
  if (const auto arp = parse_arp(frame, length)) {
    if (arp->operation != kArpRequest || arp->target_address != interface.address) return 0;
    write_ethernet(reply, arp->sender_mac, interface.mac, kArpEtherType);
    write_arp(reply, kArpReply, interface.mac, interface.address, arp->sender_mac, arp->sender_address);
    return padded(reply, kArpFrameLength);
  }
  return answer_ping(interface, frame, length, reply);
}

}  // namespace tusk::dpdk
