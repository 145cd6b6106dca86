#pragma once
// The loader's life cycle: its options, slots, arena and workers, the epochs it runs one after
// the other, the consumer's place in them, tuning and statistics. The work of the graph's nodes
// is StageWork's; one epoch's graph is an EpochRun.
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "delivery_counters.hpp"
#include "epoch_run.hpp"
#include "gpufeed/pipeline/echo.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/pipeline/loader_state.hpp"
#include "gpufeed/pipeline/sampler.hpp"
#include "gpufeed/pipeline/stats.hpp"
#include "slot_pool.hpp"
#include "stage_work.hpp"
#include "tuner.hpp"
#include "worker_gate.hpp"

namespace gpufeed::detail {

/// Where an epoch starts: after the `closed` segments, from the `start`-th sample of this
/// rank's share. With `replay`, the batch at `start` was delivered before a restart, with
/// `echoes_done` of its echoes: it is not delivered fresh again, only its remaining echoes.
struct EpochPlan {
  std::vector<EpochSegment> closed;
  std::uint64_t start = 0;
  std::uint64_t consumed = 0;  ///< samples of the share consumed before the restart
  bool replay = false;
  std::uint32_t echoes_done = 0;
};

/// Everything a loader owns. Shared by the Loader and by every Batch it handed out, so a batch
/// may outlive its loader. Thread-safe where batches need it (slot release, stats).
class LoaderCore {
 public:
  explicit LoaderCore(LoaderOptions options);
  ~LoaderCore();

  void start_epoch(std::uint64_t epoch);
  Delivery next(Deadline deadline = std::nullopt);
  /// The consumer's place in the epoch (Loader::state()). Thread-safe.
  [[nodiscard]] LoaderState state() const;
  /// Checks `state` against this loader and keeps it for the start of its epoch.
  void restore(const LoaderState& state);
  /// Fresh batches of the epoch in progress (fewer than batches_per_epoch when resumed).
  [[nodiscard]] std::uint64_t batches_in_epoch() const;
  /// Batches of `samples` samples (a share of an epoch).
  [[nodiscard]] std::uint64_t batches_for(std::uint64_t samples) const;
  void stop();
  /// Drops one reference to `slot`; the last one returns it to its pool and feeds the graph.
  void release_ref(Slot* slot) noexcept;
  [[nodiscard]] LoaderStats stats() const;
  void reset_stats();

  [[nodiscard]] const DatasetSource& source() const { return work_.source(); }
  /// One sample in a slot, before normalization.
  [[nodiscard]] const formats::SampleShape& shape() const { return work_.shape(); }

  // Device side of a batch (CUDA staging); CPU-device answers when there is none.
  void record_release(Slot& slot, std::span<void* const> streams);
  void wait_ready(const Slot& slot, void* stream) const;
  [[nodiscard]] const void* device_images(const Slot& slot) const;
  [[nodiscard]] const std::int64_t* device_labels(const Slot& slot) const;
  [[nodiscard]] formats::Layout output_layout() const;
  [[nodiscard]] std::array<std::int64_t, 4> output_shape(std::uint32_t count) const;

  [[nodiscard]] const Sampler& sampler() const { return sampler_; }
  [[nodiscard]] std::uint64_t batches_per_epoch() const { return batches_per_epoch_; }

  const LoaderOptions options;

 private:
  /// The consumer's place after delivery `d`.
  void advance_place(const Delivery& d);
  /// workers=auto / prefetch=auto: judges the window that ends at this delivery, a batch of
  /// `epoch`, and applies the tuner's change (consumer thread).
  void maybe_tune(std::uint64_t epoch);
  void apply(TuningChange change);
  [[nodiscard]] unsigned active_workers() const;
  /// The epoch in progress, or null.
  [[nodiscard]] std::shared_ptr<EpochRun> current_run() noexcept;

  [[nodiscard]] EpochPlan plan_from(const LoaderState& state) const;
  [[nodiscard]] const std::string& fingerprint() const;

  /// The thread limit, before the arena: it lets the arena have more threads than the default.
  std::optional<oneapi::tbb::global_control> thread_limit_;
  oneapi::tbb::task_arena arena_;
  StageWork work_;
  const Sampler sampler_;
  const std::uint64_t batches_per_epoch_;
  Slots slots_;
  std::optional<WorkerGate> gate_;  // workers=auto; destroyed before the arena

  /// The tuner and the window it is judging (consumer thread); its log (any thread).
  struct Tuning {
    Tuner tuner;
    std::uint64_t batches = 0;  // fresh batches at the window's start
    std::uint64_t epoch = 0;    // the epoch it started in
    std::int64_t start_ns = 0;
    std::int64_t wait_ns = 0;
    std::array<std::int64_t, kStageCount> busy_ns{};
  };
  std::optional<Tuning> tuning_;
  mutable std::mutex tuning_log_mutex_;
  std::vector<TuningChange> tuning_log_;

  DeliveryCounters delivered_;

  /// The consumer's place: the epoch in progress, its closed segments, the samples of this
  /// rank's share consumed in the current segment, echoes of the last fresh batch.
  struct Place {
    std::uint64_t epoch = 0;
    std::vector<EpochSegment> closed;
    std::uint64_t consumed = 0;
    std::uint32_t echo_repeats = 0;
    std::uint64_t batches = 0;  // fresh batches of the epoch in progress
  };
  mutable std::mutex place_mutex_;
  Place place_;
  std::optional<LoaderState> pending_;  // restore()d, applied when its epoch starts
  mutable std::once_flag fingerprint_once_;
  mutable std::string fingerprint_;

  std::mutex run_mutex_;
  std::shared_ptr<EpochRun> run_;  // destroyed first: its graph runs the stage work
};

}  // namespace gpufeed::detail
