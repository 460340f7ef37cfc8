#include "agent/path/ipv4_address.hpp"

#include <arpa/inet.h>

#include <fmt/format.h>

namespace tusk::path {

std::optional<std::uint32_t> parse_ipv4(const std::string& text) {
  in_addr parsed{};
  if (inet_pton(AF_INET, text.c_str(), &parsed) != 1) return std::nullopt;
  return ntohl(parsed.s_addr);
}

std::string ipv4_to_string(std::uint32_t address) {
  return fmt::format("{}.{}.{}.{}", address >> 24, (address >> 16) & 0xFF, (address >> 8) & 0xFF, address & 0xFF);
}

}  // namespace tusk::path
