#pragma once
// How often a piece of text stands in another, for tests that check a report or a log holds a
// line exactly so many times.
#include <cstddef>
#include <string>

namespace gpufeed::testing {

/// The places `needle` starts in `text`, overlapping ones included.
inline std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace gpufeed::testing
