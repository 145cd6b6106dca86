#pragma once
// A worker pool that feeds the loop and is not gpufeed's Loader (a torch DataLoader): what the
// consumer's process measured of it, what a trace shows of one, and its bottleneck said in its
// own terms. The DataLoader pool's rules (recommend.hpp) read it; the profiler never does.
#include <cstdint>
#include <optional>
#include <string>

#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::diagnosis {

/// A pool of worker processes that feeds the loop and is not gpufeed's Loader (a torch
/// DataLoader), as the consumer's process measured it: what making a batch costs one worker.
struct InputPoolFacts {
  unsigned workers = 0;         ///< worker processes; 0: the consumer makes its batches itself
  std::uint64_t batches = 0;    ///< batches the pool made
  std::uint64_t samples = 0;    ///< samples in them
  std::int64_t fetch_ns = 0;    ///< busy making them (dataset items, then collate), all workers
  std::int64_t collate_ns = 0;  ///< of which in collate
  std::int64_t startup_ns = 0;  ///< from each iterator's start to its first batch, summed
  std::uint64_t starts = 0;     ///< iterators started (one per epoch unless persistent)
  bool persistent_workers = false;
  bool pin_memory = false;
  unsigned prefetch_factor = 0;  ///< batches each worker runs ahead (0: unknown)
  bool cuda = false;             ///< batches go to a CUDA device
  unsigned cores = 0;            ///< cores the process may use (its affinity; 0: unknown)
  /// gpufeed's rate on a sample of the dataset packed once (gpufeed.pack, then gpufeed.Loader
  /// with every core), measured on this machine after the run; 0: not measured.
  double packed_samples_per_s = 0;
  std::uint64_t packed_items = 0;  ///< items in that sample
  std::string packed_store;        ///< its layout: "raw" or "jpeg"
  std::string pack_note;           ///< why no rate was measured (items not packable), or empty
  /// The process's CPU time a sample took in that measurement (0: not measured: every core is
  /// taken as busy at that rate), and of it the consumer thread's: the transform ops that run
  /// on each delivered batch, one after the other with the training step.
  double packed_core_ns_per_sample = 0;
  double packed_consumer_ns_per_sample = 0;
  /// The dataset's own transform, so the advice keeps training on the same inputs: the keywords
  /// it adds to the Loader's call (", transform=dataset.transform"), and what of it is fused,
  /// what runs on the batch, what cannot move as it is (a target_transform, an op the loader
  /// refuses). Empty: the dataset has no transform.
  std::string pack_loader_keywords;
  std::string pack_transform_note;
  /// Cores the training step kept busy while it ran (the process's CPU time in the steps over
  /// their wall time; a step on a device, or one that mostly waits, near 0). Workers beside a
  /// step that needs the cores slow it: the model counts them. 0: unknown or a device step.
  double step_cores = 0;
  /// A step's time right after the step before it (no wait for input between them), from a
  /// probe that took two batches at once now and then: a step after a wait runs on cold caches
  /// (and a halted core), so today's steps can be slower than those of a loop that no longer
  /// waits. 0: not measured (a loop too short for a probe, steps that draw the random numbers
  /// the loading in the process draws, or the probe turned off).
  std::int64_t warm_step_ns = 0;
  /// The run's wall time and the samples the loop took in it (its samples a second, as the
  /// profile reports them): the advice predicts that figure, with the time outside the steps
  /// (start-up, evaluation, checkpoints) as it was. 0: the steps' figures alone (a trace).
  std::int64_t run_wall_ns = 0;
  std::uint64_t run_samples = 0;
  /// Cores the machine's other processes kept busy over the run, on average (its busy CPU time
  /// on the process's cores less the process's own and its workers'): the step and the loader
  /// share what they leave. 0: none, or not known.
  double other_cores = 0;
};

/// A DataLoader with num_workers=0 as a torch.profiler trace shows it: each
/// "_SingleProcessDataLoaderIter.__next__" wait is the loop's own process making a batch (the
/// dataset's items, then collate: the aten::stack operators inside). nullopt for any other
/// trace (a worker process's fetches are not in the loop's trace). The samples in a batch and
/// the machine's cores are not in a trace: both 0.
std::optional<InputPoolFacts> single_process_dataloader(const profiler::Timeline& timeline);

/// Where the recorded ranges and the loader's counters name no bottleneck stage: the pool's
/// costlier part ("dataset": its items; "collate") with what it costs, in the DataLoader's
/// terms ("the dataset's __getitem__, 1.20 ms a sample"). Leaves `report` alone otherwise, and
/// where the pool made no batch.
void name_pool_bottleneck(profiler::GapReport& report, const InputPoolFacts& pool);

}  // namespace gpufeed::diagnosis
