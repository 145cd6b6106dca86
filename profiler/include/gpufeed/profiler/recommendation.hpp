#pragma once
// What to change, why, and what the change should do: each one checkable by a sweep.
#include <string>
#include <vector>

namespace gpufeed::profiler {

struct GapReport;
struct PipelineFacts;

struct Recommendation {
  std::string kind;    ///< echo, workers, prefetch, pinned_memory, chunk_cache, transfer_dtype,
                       ///< host_sync, launch
  std::string action;  ///< the setting or code change, e.g. "--echo 2"
  std::string reason;  ///< the measurement that triggered it
  std::string predicted_effect;       ///< in words, with numbers
  double predicted_device_util = -1;  ///< model prediction; negative when not modelled
};

/// Recommendations for `report` ordered by predicted gain (largest first).
std::vector<Recommendation> recommend(const GapReport& report, const PipelineFacts& facts);

/// Batch-echo model: each fresh batch feeds `echo` steps, so device busy time per fresh batch
/// grows e-fold until it covers the input wait: util = min(e * busy, busy + input_wait) / window.
double predicted_util_with_echo(const GapReport& report, double echo) noexcept;

}  // namespace gpufeed::profiler
