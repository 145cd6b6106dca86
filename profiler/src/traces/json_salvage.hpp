#pragma once
// Recovering the complete events of a truncated or damaged Chrome trace.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpufeed::profiler::detail {

struct Salvage {
  std::vector<std::string_view> objects;  ///< text of each complete top-level event object
  std::size_t stopped_at = 0;             ///< byte offset where scanning ended
  bool found_array = false;               ///< a traceEvents array (or a bare array) was found
};

/// Finds the event array (`"traceEvents": [` or a top-level `[`) and returns the text of every
/// complete `{...}` element before the damage. String-aware, so braces inside names are safe.
Salvage salvage_events(std::string_view text);

}  // namespace gpufeed::profiler::detail
