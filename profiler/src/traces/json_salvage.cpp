#include "traces/json_salvage.hpp"

namespace gpufeed::profiler::detail {

namespace {

std::size_t array_start(std::string_view text) {
  const std::size_t key = text.find("\"traceEvents\"");
  if (key != std::string_view::npos) {
    const std::size_t colon = text.find(':', key);
    const std::size_t open = colon == std::string_view::npos ? colon : text.find('[', colon);
    return open;
  }
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '[' ? first : std::string_view::npos;
}

/// Index one past the '}' closing the object that starts at `open`; npos when cut off.
std::size_t object_end(std::string_view text, std::size_t open) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && --depth == 0) return i + 1;
  }
  return std::string_view::npos;
}

}  // namespace

Salvage salvage_events(std::string_view text) {
  Salvage s;
  const std::size_t open = array_start(text);
  if (open == std::string_view::npos) return s;
  s.found_array = true;
  std::size_t i = open + 1;
  while (true) {
    i = text.find_first_not_of(" \t\r\n,", i);
    if (i == std::string_view::npos || text[i] != '{') break;
    const std::size_t end = object_end(text, i);
    if (end == std::string_view::npos) break;
    s.objects.push_back(text.substr(i, end - i));
    i = end;
  }
  s.stopped_at = i == std::string_view::npos ? text.size() : i;
  return s;
}

}  // namespace gpufeed::profiler::detail
