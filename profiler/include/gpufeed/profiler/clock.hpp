#pragma once
#include <chrono>
#include <cstdint>

namespace gpufeed::profiler {

/// Monotonic nanoseconds (CLOCK_MONOTONIC): the one clock every gpufeed timestamp uses.
inline std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace gpufeed::profiler
