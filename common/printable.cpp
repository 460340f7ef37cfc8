#include "common/printable.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace tusk {

namespace {

// The length of the well-formed UTF-8 sequence at text[at] (1..4) and its code point, or 0.
std::size_t sequence_at(std::string_view text, std::size_t at, char32_t& code_point) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(text[i]); };
  const std::uint8_t lead = byte(at);
  if (lead < 0x80) {
    code_point = lead;
    return 1;
  }
  std::size_t length = 0;
  char32_t value = 0;
  char32_t smallest = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, value = lead & 0x1F, smallest = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, value = lead & 0x0F, smallest = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, value = lead & 0x07, smallest = 0x10000;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (byte(at + i) & 0x3F);
  }
  if (value < smallest || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
  code_point = value;
  return length;
}

}  // namespace

std::size_t first_invalid_utf8(std::string_view text) {
  char32_t code_point = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = sequence_at(text, at, code_point);
    if (length == 0) return at;
    at += length;
  }
  return std::string_view::npos;
}

std::string valid_utf8(std::string_view text) {
  if (first_invalid_utf8(text) == std::string_view::npos) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  char32_t code_point = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = sequence_at(text, at, code_point);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++at;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char32_t code_point = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = sequence_at(text, at, code_point);
    if (length == 0) {
      out += fmt::format("\\x{:02x}", static_cast<std::uint8_t>(text[at]));
      ++at;
      continue;
    }
    if (code_point == '\n') {
      out += "\\n";
    } else if (code_point == '\r') {
      out += "\\r";
    } else if (code_point == '\t') {
      out += "\\t";
    } else if (code_point == '\\') {
      out += "\\\\";
    } else if (code_point < 0x20 || code_point == 0x7F) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(code_point));
    } else if (code_point >= 0x80 && code_point <= 0x9F) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(code_point));
    } else {
      out.append(text.substr(at, length));
    }
    at += length;
  }
  return out;
}

std::string bounded_ascii(std::string_view text, std::size_t max_bytes) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  text = text.substr(0, max_bytes);
  std::string kept;
  kept.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    kept.push_back(byte >= 0x20 && byte <= 0x7E ? c : '_');
  }
  return kept;
}

std::string cut_utf8(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t end = max_bytes;
  // Back to the start of the sequence the cut falls in: a continuation byte is 10xxxxxx.
  while (end > 0 && (static_cast<std::uint8_t>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end));
}

std::string xml_text(std::string_view text) {
  const std::string valid = valid_utf8(text);
  std::string out;
  out.reserve(valid.size());
  for (std::size_t i = 0; i < valid.size(); ++i) {
    const char c = valid[i];
    // U+FFFE and U+FFFF (EF BF BE, EF BF BF) are no XML characters either.
    if (static_cast<std::uint8_t>(c) == 0xEF && i + 2 < valid.size() &&
        static_cast<std::uint8_t>(valid[i + 1]) == 0xBF &&
        (static_cast<std::uint8_t>(valid[i + 2]) == 0xBE || static_cast<std::uint8_t>(valid[i + 2]) == 0xBF)) {
      out += static_cast<std::uint8_t>(valid[i + 2]) == 0xBE ? "\\ufffe" : "\\uffff";
      i += 2;
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\t':
      case '\n':
      case '\r':
        out += c;
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace tusk
