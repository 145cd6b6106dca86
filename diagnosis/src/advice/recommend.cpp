// The advice layer over the profiler's gap report: the rules' recommendations, ordered by
// predicted gain, with samples a second where the step's cost does not change.
#include "gpufeed/diagnosis/recommend.hpp"

#include <algorithm>
#include <array>
#include <span>

#include "advice/rules.hpp"

namespace gpufeed::diagnosis {

// The rules and the profiler's types they speak, as the rules' own files see them.
using namespace detail;  // NOLINT(google-build-using-namespace)

std::vector<Recommendation> recommend(const GapReport& report, const PipelineFacts& facts,
                                      const std::optional<InputPoolFacts>& pool) {
  std::vector<Recommendation> out;
  // The loader's settings are advised only where the input is gpufeed's Loader.
  static constexpr std::array<Rule, 9> kLoaderRules{
      echo_rule,         workers_rule, prefetch_rule, pinned_rule, chunk_cache_rule,
      object_store_rule, dtype_rule,   sync_rule,     launch_rule};
  static constexpr std::array<Rule, 4> kForeignInputRules{foreign_input_rule, pinned_rule,
                                                          sync_rule, launch_rule};
  const std::span<const Rule> rules =
      facts.loader_settings ? std::span<const Rule>(kLoaderRules) : kForeignInputRules;
  if (!facts.loader_settings && pool) {
    const unsigned cores = pool->cores != 0 ? pool->cores : facts.cpu_cores.value_or(0);
    out = pool_recommendations(report, *pool, cores);
  }
  // Without a pool's own advice, the general one for an input that holds the loop back.
  const bool pool_advised = !out.empty();
  for (Rule rule : rules) {
    if (pool_advised && rule == foreign_input_rule) continue;
    if (auto rec = rule(report, facts)) {
      // A change never makes things worse in the model: at worst it keeps today's utilization.
      if (rec->predicted_device_util >= 0) {
        rec->predicted_device_util = std::max(rec->predicted_device_util, report.device_util);
      }
      out.push_back(std::move(*rec));
    }
  }
  // Where the step's cost does not change, steps (and samples) a second follow utilization.
  double per_step = facts.samples_per_step.value_or(0);
  if (per_step <= 0 && pool && pool->batches > 0) {
    per_step = static_cast<double>(pool->samples) / static_cast<double>(pool->batches);
  }
  double now = -1;
  if (per_step > 0 && report.steps > 0 && report.device_util > 0) {
    now = per_step * static_cast<double>(report.steps) * 1e9 / window(report);
    for (Recommendation& rec : out) {
      if (rec.predicted_samples_per_s < 0 && rec.predicted_device_util >= 0) {
        rec.predicted_samples_per_s = now * rec.predicted_device_util / report.device_util;
      }
    }
  }
  // By predicted gain: samples a second over today's where known (a CPU step that the input's
  // work slows gains less than its utilization says), else utilization over today's.
  const auto gain = [&](const Recommendation& rec) {
    if (now > 0 && rec.predicted_samples_per_s > 0) return rec.predicted_samples_per_s / now;
    if (rec.predicted_device_util >= 0 && report.device_util > 0) {
      return rec.predicted_device_util / report.device_util;
    }
    return -1.0;
  };
  std::stable_sort(out.begin(), out.end(), [&](const Recommendation& a, const Recommendation& b) {
    return gain(a) > gain(b);
  });
  return out;
}

void advise(GapReport& report, const PipelineFacts& facts,
            const std::optional<InputPoolFacts>& pool) {
  if (pool && report.window_ns() > 0) name_pool_bottleneck(report, *pool);
  report.recommendations = recommend(report, facts, pool);
}

}  // namespace gpufeed::diagnosis
