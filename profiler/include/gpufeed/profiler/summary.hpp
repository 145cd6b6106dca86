#pragma once
// The terminal summary: what a user reads first.
#include <string>

#include "gpufeed/profiler/gap_report.hpp"

namespace gpufeed::profiler {

/// A dozen lines: utilization, idle by cause, verdict, bottleneck stage, gaps, recommendations
/// with their predicted effect, warnings. Ends with a newline.
std::string format_summary(const GapReport& report);

}  // namespace gpufeed::profiler
