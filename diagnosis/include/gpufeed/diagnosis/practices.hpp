#pragma once
// Checks of the practices that keep a device fed (pinned copies, no syncs in the step, tensors
// made on the device, uint8 transfers, the right number of workers, determinism), each with
// what the run measured and what to change.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpufeed/base/knobs.hpp"
#include "gpufeed/diagnosis/language.hpp"
#include "gpufeed/diagnosis/run_facts.hpp"
#include "gpufeed/pipeline/augment.hpp"

namespace gpufeed::diagnosis {

/// What a run measured that the checks read. Filled by pipebench from its report and the
/// profiler's timeline; a plain struct so the checks are a pure function.
struct PracticeInputs {
  bool gpufeed_input = true;     ///< a gpufeed Loader fed the run (RunFacts::gpufeed_input)
  bool cuda = false;             ///< batches went to a CUDA device
  bool profiled = false;         ///< the recorder ran (no --no-profile)
  bool device_records = false;   ///< CUPTI saw the device's copies and syncs
  bool training = false;         ///< a training stage ran
  bool training_on_cpu = false;  ///< its compute ran on the host's cores
  unsigned cores = 0;
  unsigned workers = 0;        ///< loader threads
  unsigned torch_threads = 0;  ///< LibTorch intra-op threads (0 without a training stage)
  /// Loader threads busy on average over the run (sum of the pipeline stages' busy threads).
  double loader_busy_threads = 0;
  std::uint64_t steps = 0;  ///< batches consumed
  std::uint64_t fresh_batches = 0;
  std::uint64_t fresh_samples = 0;
  std::uint64_t uint8_bytes_per_sample = 0;
  // Pinned staging (CUDA):
  bool pinned = false;
  std::uint64_t pinned_bytes = 0;
  double pinned_h2d_bytes_per_s = 0;
  double pageable_h2d_bytes_per_s = 0;
  // Device copies seen by CUPTI over the run:
  std::uint64_t h2d_copies = 0;
  std::uint64_t h2d_bytes = 0;
  std::uint64_t pageable_h2d_copies = 0;
  std::uint64_t pageable_h2d_bytes = 0;
  // Host synchronizations inside "step" ranges (recorder "sync" ranges, CUPTI sync calls):
  std::uint64_t step_syncs = 0;
  std::int64_t step_sync_ns = 0;
  double host_sync_idle_share = 0;  ///< idle time the gap report blamed on host syncs
  LoopHabits habits;                ///< host reads, DataParallel, empty_cache (RunFacts)
  // The diagnosis:
  bool input_bound = false;
  std::string bottleneck_stage;
  double bottleneck_busy = 0;  ///< its busy fraction per worker, 0..1
  // Reproducibility:
  std::uint64_t seed = 0;
  Order order = Order::chunk;
  Augment augment = Augment::none;
  bool deterministic = false;  ///< the training stage's algorithms
  LabelMix label_mix;          ///< distinct labels per batch against a random order's
};

struct PracticeCheck {
  std::string name;     ///< pinned_memory, host_sync, device_tensors, transfer_dtype, workers,
                        ///< determinism
  std::string status;   ///< ok, warn, info or n/a
  std::string finding;  ///< what the run measured
  std::string advice;   ///< what to change; empty when nothing
};

/// One check per practice, in a fixed order; findings and advice name settings and switches in
/// `language` (pipebench: flags; Python: keywords and torch calls).
std::vector<PracticeCheck> check_practices(const PracticeInputs& in,
                                           const Language& language = field_language());

/// The "practices" section of the terminal report. Ends with a newline.
std::string format_practices(const std::vector<PracticeCheck>& checks);
/// The --json "practices" array.
nlohmann::json practices_json(const std::vector<PracticeCheck>& checks);

}  // namespace gpufeed::diagnosis
