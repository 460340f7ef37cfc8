#include "agent/path/probe.hpp"

namespace tusk::path {

void write_probe_payload(std::uint8_t ttl, std::uint8_t* payload) {
  for (int i = 0; i < 4; ++i) payload[i] = static_cast<std::uint8_t>(kProbeMagic >> (24 - 8 * i));
  payload[4] = ttl;
  for (std::size_t i = 5; i < kProbePayloadLength; ++i) payload[i] = static_cast<std::uint8_t>(0xA5 ^ (i * 29));
}

}  // namespace tusk::path
