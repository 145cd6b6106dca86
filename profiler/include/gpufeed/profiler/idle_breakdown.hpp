#pragma once
// HolisticTraceAnalysis's idle-time breakdown per stream, for comparison with its reports.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::profiler {

/// Idle time between consecutive device activities of one stream, by HTA's categories.
struct StreamIdle {
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  std::size_t activities = 0;  ///< kernels, copies and memsets on the stream
  std::int64_t busy_ns = 0;    ///< sum of their durations
  std::int64_t host_wait_ns = 0;
  std::int64_t kernel_wait_ns = 0;
  std::int64_t other_ns = 0;
  std::size_t host_wait_gaps = 0;
  std::size_t kernel_wait_gaps = 0;
  std::size_t other_gaps = 0;
  [[nodiscard]] std::int64_t idle_ns() const noexcept {
    return host_wait_ns + kernel_wait_ns + other_ns;
  }
};

/// HTA's method: per stream, sort the activities by start; each gap = start - previous end;
/// "host wait" when the activity's launching runtime call (same correlation id) began after the
/// previous activity ended; otherwise "kernel wait" when the gap is under
/// `kernel_wait_threshold_ns`; otherwise "other". As in HTA, gaps are not clipped (overlap on a
/// stream would count negative) and an activity without a known launch is never "host wait".
std::vector<StreamIdle> idle_time_breakdown(const Timeline& timeline,
                                            std::int64_t kernel_wait_threshold_ns = 30);

}  // namespace gpufeed::profiler
