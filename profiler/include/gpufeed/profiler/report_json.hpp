#pragma once
// The gap report as JSON (the keys pipebench --json promises, DESIGN.md "Command lines").
#include <string>

#include "gpufeed/profiler/gap_report.hpp"

namespace gpufeed::profiler {

/// Keys: device_util, idle_by_cause {input_wait, host_sync, launch, other} (fractions of the
/// window), bottleneck_stage (null when unknown), verdict, input_bound_share, stages
/// {name: {busy_frac, items, share_during_wait}}, gaps {count, idle_ns, by_cause {cause: {count,
/// total_ns, median_ns, max_ns, cv}}, longest [...]}, recommendations [{kind, settings [{knob,
/// value}], action (settings by field name, then words), reason, predicted_effect,
/// predicted_device_util}], echo_predicted_util {"2".."5": device utilization the model predicts
/// with that echo factor}, window {begin_ns, end_ns, ns, basis},
/// device_timeline, busy_ns, steps, h2d_ns, pageable_h2d_ns, utilization [...], warnings [...].
/// Recommended settings in "action" are written as `spelling` says.
std::string report_json(const GapReport& report, int indent = 2,
                        const SettingSpelling& spelling = field_spelling);

/// Writes report_json to `path`; throws ReportError when the file cannot be written.
void write_report_json(const GapReport& report, const std::string& path);

}  // namespace gpufeed::profiler
