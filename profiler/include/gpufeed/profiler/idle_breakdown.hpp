#pragma once
// HolisticTraceAnalysis's idle-time breakdown per stream and its temporal breakdown, computed
// as HTA computes them, for comparison with its reports.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::profiler {

/// HTA's defaults (TraceAnalysis 0.5).
struct HtaOptions {
  /// get_idle_time_breakdown's consecutive_kernel_delay=30, which HTA compares with gaps in
  /// the trace's own unit: microseconds in PyTorch profiler traces.
  std::int64_t kernel_wait_threshold_ns = 30'000;
  /// include_last_profiler_step=False: with two or more ProfilerStep annotations, device work
  /// whose launching call began in the last step, or has no launching call in the trace, is
  /// left out.
  bool exclude_last_step = true;
};

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

/// HTA's method: per stream, sort the kernels, copies and memsets by start; each gap = start -
/// previous end; "host wait" when the activity's launching runtime call (same correlation id)
/// began after the previous activity ended; otherwise "kernel wait" when the gap is under
/// options.kernel_wait_threshold_ns; otherwise "other". As in HTA, gaps are not clipped
/// (overlap on a stream counts negative), an activity without a known launch is never "host
/// wait", and timestamps finer than a microsecond are rounded inwards (start up, end down),
/// the end being start + duration summed in float64 microseconds as HTA sums them (a quarter
/// of a microsecond apart at today's epoch timestamps).
std::vector<StreamIdle> idle_time_breakdown(const Timeline& timeline,
                                            const HtaOptions& options = {});

/// HTA's get_temporal_breakdown for one rank, over all device events with a stream (kernels,
/// copies, memsets and the driver's sync and stream-wait records): the span from the first
/// start to the last end, split into idle (no event running), compute (HTA's computation
/// kernels: not NCCL, not memory, no "Sync" in the name) and non-compute (the rest).
struct TemporalBreakdown {
  std::int64_t span_ns = 0;
  std::int64_t idle_ns = 0;
  std::int64_t compute_ns = 0;
  std::int64_t non_compute_ns = 0;
  [[nodiscard]] double share(std::int64_t part) const noexcept {
    return span_ns > 0 ? static_cast<double>(part) / static_cast<double>(span_ns) : 0.0;
  }
};
TemporalBreakdown temporal_breakdown(const Timeline& timeline, const HtaOptions& options = {});

}  // namespace gpufeed::profiler
