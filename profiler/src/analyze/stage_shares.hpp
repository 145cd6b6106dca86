#pragma once
// Which pipeline stage was busy while the consumer waited: the bottleneck stage.
#include "analyze/interval_set.hpp"
#include "gpufeed/profiler/gap_report.hpp"

namespace gpufeed::profiler::detail {

/// Fills report.stages, bottleneck_stage and bottleneck_basis. Per thread only the innermost
/// stage range counts, so nested stages ("read" inside "assemble") are not counted twice.
/// `input_wait`: the idle time attributed to input_wait.
void analyze_stages(const Timeline& timeline, const IntervalSet& input_wait, Interval window,
                    const PipelineFacts& facts, GapReport& report);

}  // namespace gpufeed::profiler::detail
