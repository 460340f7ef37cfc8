#include "common/lldp_neighbour.hpp"

#include "common/printable.hpp"

namespace tusk {

namespace {

// The length of the piece of printable()'s output that starts at `at`: an escape (\n, \\, \xNN,
// \uNNNN) or one UTF-8 character, which printable() leaves well-formed.
std::size_t printable_piece_length(std::string_view text, std::size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  if (lead == '\\' && at + 1 < text.size()) {
    if (text[at + 1] == 'x') return 4;
    if (text[at + 1] == 'u') return 6;
    return 2;
  }
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

}  // namespace

std::string lldp_text(std::string_view bytes) {
  std::string text = printable(bytes);
  if (text.size() <= kMaxLldpTextBytes) return text;
  std::size_t end = 0;
  while (end < text.size()) {
    const std::size_t next = end + printable_piece_length(text, end);
    if (next > kMaxLldpTextBytes) break;
    end = next;
  }
  text.resize(end);
  return text;
}

}  // namespace tusk
