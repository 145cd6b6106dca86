#pragma once
// Mapping another clock (CUPTI's) onto the host monotonic clock.
#include <cmath>
#include <cstdint>
#include <functional>

#include "gpufeed/profiler/clock.hpp"

namespace gpufeed::profiler {

/// One reading of both clocks: host = other + offset_ns, good to +-uncertainty_ns.
struct ClockPair {
  std::int64_t other_ns = 0;
  std::int64_t offset_ns = 0;
  std::int64_t uncertainty_ns = 0;
};

/// Reads `other` between two host clock reads, `tries` times, and keeps the tightest bracket.
/// `other` returns false on failure; then so does this (leaving `out` untouched).
inline bool measure_clock_pair(const std::function<bool(std::int64_t&)>& other, ClockPair& out,
                               int tries = 8) {
  bool found = false;
  for (int i = 0; i < tries; ++i) {
    std::int64_t o = 0;
    const std::int64_t t0 = now_ns();
    if (!other(o)) return false;
    const std::int64_t t1 = now_ns();
    if (!found || (t1 - t0) / 2 < out.uncertainty_ns) {
      out = {o, t0 + (t1 - t0) / 2 - o, (t1 - t0) / 2};
      found = true;
    }
  }
  return found;
}

/// Offset interpolated linearly between a reading at start and one at stop, so a slow drift
/// between the clocks does not skew records late in a long run.
class ClockAlignment {
 public:
  ClockAlignment() = default;
  explicit ClockAlignment(ClockPair start) : start_{start}, stop_{start} {}
  void set_stop(ClockPair stop) noexcept { stop_ = stop; }

  [[nodiscard]] std::int64_t to_host(std::int64_t other_ns) const noexcept {
    const std::int64_t span = stop_.other_ns - start_.other_ns;
    if (span <= 0) return other_ns + start_.offset_ns;
    const double f = static_cast<double>(other_ns - start_.other_ns) / static_cast<double>(span);
    const double drift = static_cast<double>(stop_.offset_ns - start_.offset_ns);
    return other_ns + start_.offset_ns + std::llround(f * drift);
  }
  [[nodiscard]] const ClockPair& start() const noexcept { return start_; }
  [[nodiscard]] const ClockPair& stop() const noexcept { return stop_; }

 private:
  ClockPair start_;
  ClockPair stop_;
};

}  // namespace gpufeed::profiler
