#pragma once
// pipebench's commands, and the set-up `run` and `sweep` share.
#include <memory>
#include <string>

#include "gpufeed/pipeline/loader.hpp"
#include "pipebench/dataset.hpp"
#include "pipebench/options.hpp"
#include "pipebench/progress.hpp"
#include "pipebench/report.hpp"
#include "pipebench/sweep.hpp"
#include "pipebench/training.hpp"

namespace gpufeed::tools::pipebench {

/// `pipebench run`: one setting, the report, the diagnosis and the practice checks.
int run_bench(const BenchOptions& options);
/// `pipebench sweep`: every setting of the grid, the table, the best one, CSV and JSON.
int run_sweep(const BenchOptions& options, const SweepAxes& axes);

DeviceChoice choose_device(const std::string& requested);
/// Resolves options.inject_stall (--inject-stall, else GPUFEED_INJECT_STALL; UsageError for a
/// malformed one) so that the report shows it. The loaders built while the result lives
/// inject it.
[[nodiscard]] testing::StallOverride stall_override_for(BenchOptions& options);
/// The loader for `options` on `data` and `device`. Throws UsageError for bad options.
LoaderOptions loader_options_for(const BenchOptions& options, const BenchDataset& data,
                                 const DeviceChoice& device);
/// The training stage for `options.model` fitted to what `loader` delivers (null for "none");
/// `training_options` receives the options it was built with.
std::unique_ptr<TrainingStage> make_training(const BenchOptions& options,
                                             const DeviceChoice& device, const Loader& loader,
                                             TrainingOptions& training_options);
/// The progress display --progress and --progress-every ask for.
std::unique_ptr<Progress> make_progress(const BenchOptions& options, const Loader& loader,
                                        bool training);

}  // namespace gpufeed::tools::pipebench
