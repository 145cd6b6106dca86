#pragma once
// Drives a Loader for a number of epochs or steps and times it.
#include <cstdint>
#include <optional>

#include "gpufeed/pipeline/loader.hpp"
#include "pipebench/options.hpp"
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
};

/// Iterates the loader as a trainer would, touching every batch, running `training` (if any)
/// on it, then releasing it.
RunResult run_benchmark(Loader& loader, const RunPlan& plan, TrainingStage* training = nullptr);

/// The process's peak resident set size in bytes.
std::uint64_t peak_rss_bytes();

}  // namespace gpufeed::tools::pipebench
