#pragma once
// The rules behind recommend(): each reads the gap report and the facts and proposes one change
// or none. Two families: the Loader's settings and the step's habits (loader_rules.cpp), and a
// DataLoader pool's (pool_rules.cpp).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "gpufeed/diagnosis/input_pool.hpp"
#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/pipeline_facts.hpp"
#include "gpufeed/profiler/recommendation.hpp"
#include "gpufeed/profiler/text_format.hpp"

namespace gpufeed::diagnosis::detail {

using profiler::duration;
using profiler::GapCause;
using profiler::GapReport;
using profiler::GapStats;
using profiler::NetworkFacts;
using profiler::percent;
using profiler::PipelineFacts;
using profiler::predicted_util_with_echo;
using profiler::Recommendation;
using profiler::StageShare;
using profiler::Verdict;

using Rule = std::optional<Recommendation> (*)(const GapReport&, const PipelineFacts&);

inline double window(const GapReport& r) {
  return static_cast<double>(std::max<std::int64_t>(1, r.window_ns()));
}
inline double idle(const GapReport& r, GapCause c) {
  return static_cast<double>(r.idle_ns[c]);
}

/// Utilization once `removed` ns of idle time no longer occur (the rest of the run unchanged).
inline double util_without(const GapReport& r, double removed) {
  return std::min(1.0, static_cast<double>(r.busy_ns) / std::max(1.0, window(r) - removed));
}

// The Loader's settings and the step's habits.
std::optional<Recommendation> echo_rule(const GapReport& r, const PipelineFacts& f);
std::optional<Recommendation> workers_rule(const GapReport& r, const PipelineFacts& f);
std::optional<Recommendation> prefetch_rule(const GapReport& r, const PipelineFacts& f);
std::optional<Recommendation> pinned_rule(const GapReport& r, const PipelineFacts& f);
std::optional<Recommendation> chunk_cache_rule(const GapReport& r, const PipelineFacts& f);
std::optional<Recommendation> object_store_rule(const GapReport& r, const PipelineFacts& f);
std::optional<Recommendation> dtype_rule(const GapReport& r, const PipelineFacts& f);
std::optional<Recommendation> sync_rule(const GapReport& r, const PipelineFacts& f);
std::optional<Recommendation> launch_rule(const GapReport& r, const PipelineFacts& f);
/// An input that is not a gpufeed Loader and has no pool advice: what removes its waits.
std::optional<Recommendation> foreign_input_rule(const GapReport& r, const PipelineFacts& f);

/// A DataLoader pool's advice (num_workers, pack, persistent_workers, pin_memory), unsorted;
/// `cores` the machine's (0: unknown, a trace).
std::vector<Recommendation> pool_recommendations(const GapReport& report,
                                                 const InputPoolFacts& pool, unsigned cores);

}  // namespace gpufeed::diagnosis::detail
