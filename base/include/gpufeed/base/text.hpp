#pragma once
// printf-style formatting into a std::string, for aligned terminal text; XML escaping.
#include <cstdarg>
#include <cstdio>
#include <string>
#include <string_view>

namespace gpufeed {

/// Formats like printf; output longer than 511 characters is cut.
[[gnu::format(printf, 1, 2)]] inline std::string format(const char* pattern, ...) {
  char buffer[512];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(buffer, sizeof buffer, pattern, args);
  va_end(args);
  return buffer;
}

/// The text up to its first line break: what a one-line error message keeps of a longer one.
inline std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

/// `text` with &, <, >, " and ' escaped: safe in XML, SVG and HTML text and attributes.
inline std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
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
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace gpufeed
