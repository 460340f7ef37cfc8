// "host:port" as typed on a command line.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tusk {

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};

// Accepts "host:port" and "[v6addr]:port". Throws std::invalid_argument naming the text.
inline HostPort parse_host_port(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw std::invalid_argument("'" + text + "' is not host:port (e.g. 127.0.0.1:7420)");
  }
  HostPort out;
  out.host = text.substr(0, colon);
  if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  std::size_t used = 0;
  unsigned long port = 0;
  try {
    port = std::stoul(text.substr(colon + 1), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() - colon - 1 || port > 65535) {
    throw std::invalid_argument("'" + text + "' has no valid port (0-65535)");
  }
  out.port = static_cast<std::uint16_t>(port);
  return out;
}

}  // namespace tusk
