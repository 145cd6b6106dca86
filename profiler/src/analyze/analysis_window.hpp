#pragma once
// The steady-state window: the run minus its warm-up.
#include <string>
#include <vector>

#include "analyze/interval_set.hpp"
#include "gpufeed/profiler/gap_report.hpp"

namespace gpufeed::profiler::detail {

struct WindowChoice {
  Interval window;
  std::string basis;
};

/// `steps`: the "step" ranges sorted by begin; `busy`: the device busy set over the whole run.
/// With at least 2 x warmup_steps steps the window starts where step #warmup_steps - 1 ends
/// (so each window iteration is one wait plus one step); otherwise it skips warmup_fraction of
/// the span. It ends where the last step or device activity ends.
WindowChoice steady_state_window(const std::vector<Interval>& steps, const IntervalSet& busy,
                                 const AnalysisOptions& options);

}  // namespace gpufeed::profiler::detail
