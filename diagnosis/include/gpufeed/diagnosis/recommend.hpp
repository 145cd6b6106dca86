#pragma once
// The advice layer over the profiler's gap report: what to change, why, and what the change
// should do, each one checkable by a sweep. The profiler measures and attributes; these rules
// read its report plus the facts only the caller knows, and fill GapReport::recommendations.
#include <optional>
#include <vector>

#include "gpufeed/diagnosis/input_pool.hpp"
#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/pipeline_facts.hpp"
#include "gpufeed/profiler/recommendation.hpp"

namespace gpufeed::diagnosis {

/// Recommendations for `report` ordered by predicted gain (largest first). Where the input is
/// gpufeed's Loader (facts.loader_settings), its settings and the step's habits; else the
/// advice of `pool` (a DataLoader's worker pool, when known) or, without any, what removes the
/// input's waits. Pure function of its arguments.
std::vector<profiler::Recommendation> recommend(const profiler::GapReport& report,
                                                const profiler::PipelineFacts& facts,
                                                const std::optional<InputPoolFacts>& pool = {});

/// The advice on a report fresh from profiler::analyze(): names the pool's bottleneck where the
/// profile named none (name_pool_bottleneck), then fills report.recommendations.
void advise(profiler::GapReport& report, const profiler::PipelineFacts& facts,
            const std::optional<InputPoolFacts>& pool = {});

}  // namespace gpufeed::diagnosis
