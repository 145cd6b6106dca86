#pragma once
// The ranks of one data-parallel job side by side, and the rank the others wait for.
#include <cstdint>
#include <string>
#include <vector>

#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::profiler {

/// One rank's profile, per training step over its steady-state window (milliseconds).
struct RankSummary {
  std::int32_t rank = -1;
  GapReport report;  ///< the rank's own analysis (utilization, idle by cause, bottleneck)
  std::size_t steps = 0;
  double period_ms = 0;      ///< window / steps: one iteration, everything included
  double input_wait_ms = 0;  ///< blocked on the loader ("wait")
  double host_sync_ms = 0;   ///< host syncs ("sync" ranges, the driver's sync records)
  double collective_ms = 0;  ///< in collectives ("collective" ranges, NCCL kernels)
  double compute_ms = 0;     ///< inside steps, neither syncing nor in a collective
};

/// The rank that holds the others back, why, and what it cost them.
struct Straggler {
  std::int32_t rank = -1;  ///< -1: no rank holds the others back measurably
  /// "input", "host_sync" or "compute"; "unknown" when the straggler spends no longer than the
  /// others on any of them (its time went outside the traced steps and waits).
  std::string cause;
  std::string stage;  ///< the loader stage behind the input waits (cause "input")
  double lost_s = 0;  ///< time the other ranks spent waiting for it, summed
  /// "collectives" (measured: the others' time in collectives beyond the straggler's) or
  /// "step times" (estimated from how much longer the others' steps are: no collectives were
  /// recorded).
  std::string basis;
  std::string explanation;  ///< one sentence with the numbers
};

struct JobReport {
  std::vector<RankSummary> ranks;  ///< by rank
  Straggler straggler;
  std::vector<std::string> warnings;
};

/// Analyzes each rank's timeline and compares them. In synchronous data parallelism every
/// rank waits in the gradient all-reduce for the last one to arrive, so the rank with the
/// least time in collectives is the straggler and the others' excess collective time is what
/// it cost them; its cause is what it spends more time on than the others per step (input
/// waits, host syncs or compute). Ranks come from Timeline::rank, else their position.
/// Pure function; never throws on odd input (warnings instead).
JobReport analyze_job(const std::vector<Timeline>& ranks, const AnalysisOptions& options = {});

/// The per-rank table and the straggler's line. Ends with a newline.
std::string format_job(const JobReport& report);
/// {"ranks": [...], "straggler": {"rank", "cause", "stage", "lost_s", "basis", ...}}.
std::string job_json(const JobReport& report);

}  // namespace gpufeed::profiler
