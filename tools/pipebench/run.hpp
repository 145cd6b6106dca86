#pragma once
// Drives a Loader for a number of epochs or steps and times it.
#include <cstdint>

#include "gpufeed/pipeline/loader.hpp"
#include "pipebench/options.hpp"

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
  LoaderStats stats;
};

/// Iterates the loader as a trainer would, touching and releasing every batch.
RunResult run_benchmark(Loader& loader, const RunPlan& plan);

/// The process's peak resident set size in bytes.
std::uint64_t peak_rss_bytes();

}  // namespace gpufeed::tools::pipebench
