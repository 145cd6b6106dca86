#pragma once
// Drives a Loader for a number of epochs or steps and times it.
#include <cstdint>
#include <optional>

#include "gpufeed/pipeline/loader.hpp"
#include "pipebench/options.hpp"
#include "pipebench/progress.hpp"
#include "pipebench/training.hpp"

namespace gpufeed::tools::pipebench {

struct RunResult {
  std::uint64_t epochs = 0;  ///< epochs started
  std::uint64_t batches = 0;
  std::uint64_t samples = 0;
  double wall_s = 0;
  /// After the first epoch (zero when the run ended within it).
  std::uint64_t steady_samples = 0;
  double steady_s = 0;
  double checksum = 0;  ///< a few floats of every batch, so the reads are not optimized away
  /// The loader's counters; with a training stage, `step` holds its time and steps.
  LoaderStats stats;
  std::optional<TrainingStats> training;  ///< with a training stage
  /// The signal that stopped the run early (SIGINT, SIGTERM; tools::stop_signal()), else 0.
  int interrupted_by = 0;
};

/// Iterates the loader as a trainer would, touching every batch, running `training` (if any)
/// on it, then releasing it; reports to `progress` (if any) as it goes. Stops after the step in
/// progress when tools::stop_signal() turns non-zero (RunResult::interrupted_by).
RunResult run_benchmark(Loader& loader, const RunPlan& plan, TrainingStage* training = nullptr,
                        Progress* progress = nullptr);

/// The process's peak resident set size in bytes (since the last reset_peak_rss()).
std::uint64_t peak_rss_bytes();
/// Restarts the peak at the current resident size (Linux); false where that is not possible.
bool reset_peak_rss();

}  // namespace gpufeed::tools::pipebench
