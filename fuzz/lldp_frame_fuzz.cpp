// An LLDPDU frame as any neighbour (or anything on the wire) may send it: the input is the whole
// frame, copied to a buffer of exactly its size so AddressSanitizer sees any read past it.
// Whatever it holds, parse_lldp_frame either rejects it with a reason or gives a neighbour whose
// texts are printable and at most 255 bytes; and a neighbour whose texts need no escaping is
// built back into a frame that parses to the same neighbour.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/lldp/lldp_frame.hpp"
#include "common/printable.hpp"

namespace {

// At most 255 bytes of valid UTF-8 without a C0 or C1 control character or DEL.
bool bounded_and_printable(const std::string& text) {
  if (text.size() > tusk::kMaxLldpTextBytes || tusk::first_invalid_utf8(text) != std::string::npos) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte == 0x7F) return false;
    if (byte == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xA0) return false;
  }
  return true;
}

// Whether lldp_text(text) is `text`: what build_lldp_frame writes as bytes then reads back alike.
bool unescaped(const std::string& text) {
  return tusk::lldp_text(text) == text;
}

void check_round_trip(const tusk::LldpNeighbour& neighbour) {
  if (!unescaped(neighbour.chassis_id) || !unescaped(neighbour.port_id) || !unescaped(neighbour.port_description) ||
      !unescaped(neighbour.system_name)) {
    return;
  }
  std::vector<std::uint8_t> frame;
  try {
    frame = tusk::lldp::build_lldp_frame(neighbour, {0x02, 0, 0, 0, 0, 1});
  } catch (const std::invalid_argument&) {
    return;  // a MAC id cut short at 255 characters, an address family it has no text for
  }
  const tusk::lldp::LldpFrameParse again = tusk::lldp::parse_lldp_frame(frame.data(), frame.size());
  if (!again.neighbour || !(*again.neighbour == neighbour)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> frame(data, data + size);
  const bool lldp = tusk::lldp::is_lldp_frame(frame.data(), frame.size());
  const tusk::lldp::LldpFrameParse parsed = tusk::lldp::parse_lldp_frame(frame.data(), frame.size());
  if (parsed.neighbour.has_value() != (parsed.error == tusk::lldp::LldpFrameError::None)) std::abort();
  if (parsed.neighbour.has_value() != parsed.reason.empty()) std::abort();
  if (lldp != (parsed.error != tusk::lldp::LldpFrameError::NotLldp)) std::abort();
  if (!parsed.neighbour) return 0;
  const tusk::LldpNeighbour& n = *parsed.neighbour;
  for (const std::string* text :
       {&n.chassis_id, &n.port_id, &n.port_description, &n.system_name, &n.management_address}) {
    if (!bounded_and_printable(*text)) std::abort();
  }
  if (n.ttl_s > 0xFFFF || n.chassis_id.empty() || n.port_id.empty()) std::abort();
  check_round_trip(n);
  return 0;
}
