#pragma once
// The terminal summary: what a user reads first.
#include <string>

#include "gpufeed/profiler/gap_report.hpp"

namespace gpufeed::profiler {

/// A dozen lines: utilization, idle by cause, verdict, bottleneck stage (when input-bound), gaps,
/// recommendations with their predicted effect ("no change" when there are none), warnings.
/// Settings are written as `spelling` says. Ends with a newline.
std::string format_summary(const GapReport& report,
                           const SettingSpelling& spelling = field_spelling);

}  // namespace gpufeed::profiler
