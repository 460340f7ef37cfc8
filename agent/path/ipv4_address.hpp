// IPv4 addresses as text, both ways: what a path trace, a plan and a log line write them as.
// Host byte order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tusk::path {

// Dotted quad to an address; nothing for any other text.
std::optional<std::uint32_t> parse_ipv4(const std::string& text);
std::string ipv4_to_string(std::uint32_t address);

}  // namespace tusk::path
