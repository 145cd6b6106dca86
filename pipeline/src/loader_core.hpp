#pragma once
// The loader's life cycle: its options, slots, arena and workers, the epochs it runs one after
// the other, and its statistics. The work of the graph's nodes is StageWork's; one epoch's graph
// is an EpochRun; how many slots is the SlotPlan's; the consumer's place is ConsumerPlace's; the
// tuner's window is TuningWindow's.
#include <memory>
#include <mutex>
#include <optional>
#include <span>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "consumer_place.hpp"
#include "cpu_share.hpp"
#include "delivery_counters.hpp"
#include "epoch_run.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/pipeline/sampler.hpp"
#include "gpufeed/pipeline/stats.hpp"
#include "slot_pool.hpp"
#include "stage_work.hpp"
#include "tuning_window.hpp"
#include "worker_gate.hpp"

namespace gpufeed::pipeline::detail {

/// Everything a loader owns. Shared by the Loader and by every Batch it handed out, so a batch
/// may outlive its loader. Thread-safe where batches need it (slot release, stats).
class LoaderCore {
 public:
  explicit LoaderCore(LoaderOptions options);
  ~LoaderCore();

  void start_epoch(std::uint64_t epoch);
  Delivery next(Deadline deadline = std::nullopt);
  /// Batches of `samples` samples (a share of an epoch).
  [[nodiscard]] std::uint64_t batches_for(std::uint64_t samples) const;
  void stop();
  /// Drops one reference to `slot`; the last one returns it to its pool and feeds the graph.
  void release_ref(Slot* slot) noexcept;
  [[nodiscard]] LoaderStats stats() const;
  void reset_stats();
  void add_stage_work(Stage stage, std::int64_t busy_ns, std::uint64_t items) {
    work_.counters.add(stage, busy_ns, items);
  }

  [[nodiscard]] const DatasetSource& source() const { return work_.source(); }
  /// One sample in a slot, before normalization.
  [[nodiscard]] const formats::SampleShape& shape() const { return work_.shape(); }
  /// The consumer's place in the epoch (Loader::state(), restore(), batches_in_epoch()).
  [[nodiscard]] ConsumerPlace& place() { return place_; }
  [[nodiscard]] const ConsumerPlace& place() const { return place_; }

  // Device side of a batch (CUDA staging); no-ops on the CPU device.
  void record_release(Slot& slot, std::span<void* const> streams);
  void wait_ready(const Slot& slot, void* stream) const;

  [[nodiscard]] const Sampler& sampler() const { return sampler_; }
  [[nodiscard]] const LabelMix& label_mix() const { return label_mix_; }
  [[nodiscard]] const std::vector<std::string>& notices() const { return notices_; }
  [[nodiscard]] std::uint64_t batches_per_epoch() const { return batches_per_epoch_; }

  const LoaderOptions options;

 private:
  /// workers=auto / prefetch=auto: judges the window that ends at this delivery, a batch of
  /// `epoch`, and applies the tuner's change (consumer thread).
  void maybe_tune(std::uint64_t epoch);
  void apply(const TuningChange& change);
  [[nodiscard]] unsigned active_workers() const;
  /// The epoch in progress, or null.
  [[nodiscard]] std::shared_ptr<EpochRun> current_run() noexcept;

  /// This rank's share of the cores: the workers (or the budget of workers=auto) left open.
  const CpuShare cpu_share_;
  /// The thread limit, before the arena: it lets the arena have more threads than the default.
  std::optional<oneapi::tbb::global_control> thread_limit_;
  oneapi::tbb::task_arena arena_;
  StageWork work_;
  const Sampler sampler_;
  const std::uint64_t batches_per_epoch_;
  const LabelMix label_mix_;
  const std::vector<std::string> notices_;
  Slots slots_;
  std::optional<WorkerGate> gate_;      // workers=auto; destroyed before the arena
  std::optional<TuningWindow> tuning_;  // workers=auto or prefetch=auto
  DeliveryCounters delivered_;
  ConsumerPlace place_;

  std::mutex run_mutex_;
  std::shared_ptr<EpochRun> run_;  // destroyed first: its graph runs the stage work
};

}  // namespace gpufeed::pipeline::detail
