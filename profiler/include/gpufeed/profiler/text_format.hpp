#pragma once
// Shares and durations as the reports write them: the summary, the HTML report and the
// advice texts built over them (gpufeed::diagnosis) read the same.
#include <cstdint>
#include <cstdio>
#include <string>

namespace gpufeed::profiler {

/// 0.4567 -> "45.7%".
inline std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100.0);
  return buf;
}

/// Nanoseconds in the unit that reads best: "850 ns", "12.3 us", "4.56 ms", "1.23 s".
inline std::string duration(std::int64_t ns) {
  char buf[32];
  const double v = static_cast<double>(ns);
  if (ns < 0) return "-" + duration(-ns);
  if (ns < 1'000) {
    std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  } else if (ns < 1'000'000) {
    std::snprintf(buf, sizeof buf, "%.1f us", v / 1e3);
  } else if (ns < 1'000'000'000) {
    std::snprintf(buf, sizeof buf, "%.2f ms", v / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f s", v / 1e9);
  }
  return buf;
}

}  // namespace gpufeed::profiler
