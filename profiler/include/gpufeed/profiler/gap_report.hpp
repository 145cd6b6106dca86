#pragma once
// Device utilization, idle gaps and their causes over the steady-state window.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpufeed/profiler/pipeline_facts.hpp"
#include "gpufeed/profiler/recommendation.hpp"
#include "gpufeed/profiler/timeline.hpp"
#include "gpufeed/profiler/verdict.hpp"

namespace gpufeed::profiler {

enum class GapCause : std::uint8_t { input_wait, host_sync, launch, other };
inline constexpr std::size_t kGapCauseCount = 4;
inline constexpr std::array<const char*, kGapCauseCount> kGapCauseNames{"input_wait", "host_sync",
                                                                        "launch", "other"};
/// "input_wait", "host_sync", "launch", "other".
const char* gap_cause_name(GapCause cause) noexcept;

/// Nanoseconds per cause.
struct CauseTimes {
  std::int64_t ns[kGapCauseCount] = {};
  std::int64_t& operator[](GapCause c) noexcept { return ns[static_cast<std::size_t>(c)]; }
  std::int64_t operator[](GapCause c) const noexcept { return ns[static_cast<std::size_t>(c)]; }
  [[nodiscard]] std::int64_t total() const noexcept { return ns[0] + ns[1] + ns[2] + ns[3]; }
  [[nodiscard]] GapCause largest() const noexcept;
};

/// One stretch of device idleness; a gap may be split between causes by time overlap.
struct Gap {
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  CauseTimes by_cause;
  GapCause cause = GapCause::other;  ///< the cause with the most time
};

/// Summary of the gaps whose main cause is one cause.
struct GapStats {
  std::size_t count = 0;
  std::int64_t total_ns = 0;
  std::int64_t max_ns = 0;
  std::int64_t median_ns = 0;
  double cv = 0;  ///< coefficient of variation of gap lengths: > 1 means bursty
};

/// Per pipeline stage, from its recorded ranges (innermost range per thread counts).
struct StageShare {
  std::string name;
  double share_during_wait = 0;  ///< mean threads in the stage while the consumer waited
  double busy_frac = 0;          ///< thread-time / window (/ workers when known)
  std::size_t items = 0;         ///< ranges in the window
};

struct AnalysisOptions {
  std::size_t warmup_steps = 5;   ///< "step" ranges skipped as warm-up ...
  double warmup_fraction = 0.10;  ///< ... or this share of the span, without 2x that many steps
  std::size_t utilization_bins = 100;
  VerdictThresholds thresholds;
};

struct GapReport {
  std::int64_t window_begin_ns = 0;
  std::int64_t window_end_ns = 0;
  std::string window_basis;     ///< how the warm-up was excluded
  std::string device_timeline;  ///< "device activity" or "step ranges" (no device records)
  std::size_t steps = 0;        ///< "step" ranges inside the window
  std::int64_t busy_ns = 0;     ///< union of device work inside the window
  double device_util = 0;       ///< busy / window
  CauseTimes idle_ns;           ///< idle time per cause; sums to window - busy
  double idle_by_cause[kGapCauseCount] = {};  ///< idle_ns / window
  std::int64_t consumer_wait_ns = 0;          ///< union of "wait" ranges inside the window
  std::vector<Gap> gaps;
  GapStats gap_stats[kGapCauseCount];
  std::vector<StageShare> stages;
  /// The busiest loader stage (while the consumer waited, when it did); empty when unknown.
  /// A bottleneck only when the run is input-bound: see has_bottleneck().
  std::string bottleneck_stage;
  std::string bottleneck_basis;  ///< "input_wait", "overall" or "pipeline facts"
  double input_bound_share = 0;  ///< idle input_wait / window
  Verdict verdict = Verdict::not_input_bound;
  std::int64_t pageable_h2d_ns = 0;  ///< pageable host-to-device copy time in the window
  std::int64_t h2d_ns = 0;
  std::vector<double> utilization;  ///< device utilization per equal-width bin of the window
  /// What to change, as gpufeed::diagnosis advises it (diagnosis::advise()); analyze() leaves
  /// it empty: the profiler measures and attributes, it does not advise. The reports show it.
  std::vector<Recommendation> recommendations;
  std::vector<std::string> warnings;

  [[nodiscard]] std::int64_t window_ns() const noexcept { return window_end_ns - window_begin_ns; }
  /// The input holds the device back and a stage is known to be the reason: only then do the
  /// reports name a bottleneck stage.
  [[nodiscard]] bool has_bottleneck() const noexcept {
    return verdict != Verdict::not_input_bound && !bottleneck_stage.empty();
  }
  [[nodiscard]] double idle_share(GapCause c) const noexcept {
    return idle_by_cause[static_cast<std::size_t>(c)];
  }
};

/// Below this utilization a loop that is not input-bound still gets told where its idle time
/// went: a low-utilization run is never reported as healthy.
inline constexpr double kIdleElsewhereUtil = 0.5;

/// When the device is mostly idle but not for want of input: one sentence that says how much,
/// the cause that took most of it and what to look at. Empty otherwise (input-bound runs, and
/// runs that keep the device busy).
[[nodiscard]] std::string idle_elsewhere(const GapReport& report);

/// Batch-echo model: each fresh batch feeds `echo` steps, so device busy time per fresh batch
/// grows e-fold until it covers the input wait: util = min(e * busy, busy + input_wait) / window.
/// The JSON report's echo_predicted_util, and the echo advice's prediction.
double predicted_util_with_echo(const GapReport& report, double echo) noexcept;

/// Runs the whole analysis (window, busy time, gaps and causes, bottleneck stage, verdict).
/// `facts` name the bottleneck where no stage ranges do and scale the stages' busy shares;
/// advice is gpufeed::diagnosis's (advise()). Never throws on odd input: an empty or
/// device-less timeline gives a report with warnings. Pure function of its arguments.
GapReport analyze(const Timeline& timeline, const AnalysisOptions& options = {},
                  const PipelineFacts& facts = {});

}  // namespace gpufeed::profiler
