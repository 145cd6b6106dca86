#include "analyze/analysis_window.hpp"

#include <algorithm>
#include <cmath>

namespace gpufeed::profiler::detail {

WindowChoice steady_state_window(const std::vector<Interval>& steps, const IntervalSet& busy,
                                 const AnalysisOptions& options) {
  if (steps.empty() && busy.empty()) return {{0, 0}, "empty timeline"};
  Interval span{INT64_MAX, INT64_MIN};
  for (const Interval& s : steps) {
    span.begin = std::min(span.begin, s.begin);
    span.end = std::max(span.end, s.end);
  }
  if (!busy.empty()) {
    span.begin = std::min(span.begin, busy.front().begin);
    span.end = std::max(span.end, busy.back().end);
  }
  const std::size_t n = options.warmup_steps;
  if (n == 0) return {span, "whole run (no warm-up excluded)"};
  if (steps.size() >= 2 * n) {
    return {{steps[n - 1].end, span.end}, "after the first " + std::to_string(n) + " steps"};
  }
  const double f = std::clamp(options.warmup_fraction, 0.0, 0.9);
  const auto skip = static_cast<std::int64_t>(std::llround(f * static_cast<double>(span.length())));
  const std::string why =
      steps.empty() ? "no \"step\" ranges"
                    : std::to_string(steps.size()) + " steps, fewer than " + std::to_string(2 * n);
  return {{span.begin + skip, span.end},
          "after the first " + std::to_string(std::lround(f * 100)) + "% of the run (" + why + ")"};
}

}  // namespace gpufeed::profiler::detail
