#include "mgbench/core/text.hpp"
#include "mgbench/core/ranges_text.hpp"

#include <cstdint>

namespace mgbench {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::uint32_t decode(std::string_view s, std::size_t i, std::size_t len) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  if (len == 1) return byte(i);
  const std::uint32_t lead_mask = len == 2 ? 0x1F : (len == 3 ? 0x0F : 0x07);
  std::uint32_t cp = byte(i) & lead_mask;
  for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (byte(i + k) & 0x3Fu);
  return cp;
}

// C1 controls and the invisible characters that reorder text (bidi embeddings, overrides,
// isolates and marks).
bool is_hostile_code_point(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  std::size_t len = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  const std::uint32_t cp = decode(s, i, len);
  // Overlong forms, surrogates, out of range, and the XML-forbidden U+FFFE/U+FFFF.
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return 0;
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF) return 0;
  return len;
}

std::string sanitize_text(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_sequence_length(text, i);
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    const std::uint32_t cp = decode(text, i, len);
    const bool crlf = cp == '\r' && i + 1 < text.size() && text[i + 1] == '\n';
    if (cp == '\t' || cp == '\n' || crlf) {
      out += keep_newlines ? static_cast<char>(cp) : ' ';
    } else if (cp == '\r') {
      out += keep_newlines ? kReplacement : std::string_view(" ");
    } else if (cp < 0x20 || cp == 0x7F || is_hostile_code_point(cp)) {
      out += kReplacement;
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::string one_line(std::string_view text) {
  const std::string clean = sanitize_text(text, false);
  std::string out;
  out.reserve(clean.size());
  for (char c : clean) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string ranges_text(const std::vector<int>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size();) {
    std::size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(values[i]);
    if (j >= i + 2) out += "-" + std::to_string(values[j]);
    if (j == i + 1) out += "," + std::to_string(values[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace mgbench
