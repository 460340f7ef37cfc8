// Text from a peer or a file, made safe for where it goes. An agent's event message, a stream id,
// a profile's comment or a directory name may hold any byte: a strict JSON writer throws on bytes
// that are not UTF-8, a newline in a log line forges the next line, an escape sequence drives the
// operator's terminal, and XML 1.0 forbids most control characters outright.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tusk {

// The offset of the first byte that does not start or continue a well-formed UTF-8 sequence
// (overlong forms, surrogates and code points past U+10FFFF included), or npos when all are.
std::size_t first_invalid_utf8(std::string_view text);

// `text` with each byte of an ill-formed sequence replaced by U+FFFD.
std::string valid_utf8(std::string_view text);

// For a log line or a terminal: ill-formed bytes as \xNN, the C0 and C1 control characters and DEL
// as \n, \r, \t, \xNN or \u0080..\u009f, a backslash doubled; everything else as it is. The result
// is one line of valid UTF-8 that moves no cursor.
std::string printable(std::string_view text);
// Whether printable(text) is `text` itself, as it is for plain ASCII without a backslash: a
// check that costs no copy, for the texts every sample repeats.
inline bool printable_as_is(std::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7F || byte == '\\') return false;
  }
  return true;
}

// For a short field kept from a source that may be hostile (a transceiver's vendor name, a tool's
// error line): surrounding blanks trimmed, every byte outside printable ASCII written as '_' (as
// ethtool writes a module's own strings), cut to `max_bytes`.
std::string bounded_ascii(std::string_view text, std::size_t max_bytes);

// The longest prefix of `text` of at most `max_bytes` that does not end inside a UTF-8 sequence:
// a cut that a strict JSON writer, a terminal or a scheduler's reason can take.
std::string cut_utf8(std::string_view text, std::size_t max_bytes);

// For XML 1.0 character data and attribute values: valid_utf8, markup characters as entities, and
// the characters XML cannot carry at all (even as references: the control characters as \xNN,
// U+FFFE and U+FFFF as \ufffe and \uffff) written out.
std::string xml_text(std::string_view text);

}  // namespace tusk
