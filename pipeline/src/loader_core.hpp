#pragma once
// The shared state behind Loader and Batch, and the per-epoch flow graph.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "dataset_source.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/pipeline/chunk_cache.hpp"
#include "gpufeed/pipeline/echo.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/pipeline/loader_state.hpp"
#include "gpufeed/pipeline/normalize.hpp"
#include "gpufeed/pipeline/sampler.hpp"
#include "gpufeed/pipeline/stats.hpp"
#include "image_samples.hpp"
#include "slot_pool.hpp"
#include "tuner.hpp"
#include "worker_gate.hpp"

namespace gpufeed::detail {
class CudaStaging;
}

namespace gpufeed::detail {

/// A batch travelling through the graph: its position in the epoch and the slot it fills.
struct Ticket {
  std::uint64_t seq = 0;
  Slot* slot = nullptr;
};

class LoaderCore;

/// What the consumer gets from EpochRun::next(): a slot (null at the end of the epoch, or when
/// the wait timed out) and whether it is an echo of a batch delivered before.
struct Delivery {
  Slot* slot = nullptr;
  bool echoed = false;
  bool timed_out = false;  ///< no batch before the deadline; the epoch goes on
};

using Deadline = std::optional<std::chrono::steady_clock::time_point>;

/// Points where tests pause the pipeline to make an interleaving happen on purpose. Null in
/// production: each costs one relaxed load. Set them only while no loader runs.
struct TestHooks {
  /// In EpochRun::feed(), after a slot left the pool and before it is counted in flight.
  std::atomic<void (*)()> slot_taken{nullptr};
  /// In EpochRun::next(), while an echo is being re-augmented.
  std::atomic<void (*)()> reaugmenting{nullptr};
  /// In EpochRun::deliver(), before a batch joins the ready queue (no lock held).
  std::atomic<void (*)()> delivering{nullptr};
  /// In EpochRun::deliver(), after a batch joined the ready queue (no lock held).
  std::atomic<void (*)()> delivered{nullptr};
  /// In LoaderCore::assemble() (the read stage, or decode for encoded images) and normalize(),
  /// before the stage works on a batch: a hook that throws fails the stage.
  std::atomic<void (*)()> assembling{nullptr};
  std::atomic<void (*)()> normalizing{nullptr};
};
extern TestHooks test_hooks;

/// Calls `hook` when a test set it.
inline void run_hook(const std::atomic<void (*)()>& hook) {
  if (auto* f = hook.load(std::memory_order_relaxed)) f();
}

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

/// One epoch: a flow graph (assemble -> normalize -> sequencer -> deliver) built in the
/// loader's arena, fed one ticket per free slot, and the in-order queue the consumer pops.
///
/// Cancelling sets a flag the node bodies check; tickets still flow to `deliver`, which returns
/// their slots, so nothing is lost and wait() returns after at most one batch of work per
/// worker. Thread-safe: feed() from any thread, next() from the consumer.
class EpochRun {
 public:
  EpochRun(LoaderCore& core, std::uint64_t epoch, const EpochPlan& plan);
  EpochRun(const EpochRun&) = delete;
  EpochRun& operator=(const EpochRun&) = delete;

  /// Starts a batch in every free slot (up to the end of the epoch).
  void feed();
  /// The next batch in order (fresh or echoed), with one reference taken for the caller; a
  /// null slot at the end of the epoch, or a timed-out delivery when `deadline` passes first.
  /// Rethrows a worker's failure as PipelineError; UsageError when every slot has been held
  /// elsewhere, with nothing in flight, for longer than a grace period (slots released on other
  /// threads, such as tensors freed by an autograd thread, come back within it).
  Delivery next(Deadline deadline = std::nullopt);
  /// Stops the work and waits for the workers to leave the graph and for a re-augment that
  /// next() is doing on another thread.
  void cancel_and_wait();
  /// Fresh batches this run delivers (a batch replayed for its echoes does not count).
  [[nodiscard]] std::uint64_t fresh_batches() const { return num_batches_ - (replay_ ? 1 : 0); }

 private:
  using Node = oneapi::tbb::flow::function_node<Ticket, Ticket>;
  void fail(const char* stage, const Ticket& ticket, std::exception_ptr error);
  Ticket run_stage(const char* stage, const Ticket& ticket, void (LoaderCore::*work)(Slot&));
  void deliver(const Ticket& ticket);
  /// Every slot is held outside the graph (by the consumer or for echoing). Takes feed_mutex_,
  /// so that a slot between the pool and the graph is never missed; call with mutex_ held.
  [[nodiscard]] bool starved();
  /// Throws once starved() has held for the whole grace period; else when to look again.
  std::chrono::steady_clock::time_point check_not_starved(
      std::chrono::steady_clock::time_point now);
  void drop_echo_hold();
  /// Re-augments current_ into `target` with mutex_ (held by `lock`) released meanwhile.
  void reaugment_unlocked(std::unique_lock<std::mutex>& lock, Slot& target);

  LoaderCore& core_;
  const std::uint64_t epoch_;
  const std::vector<std::uint64_t> order_;
  const std::uint64_t num_batches_;
  const std::uint64_t index_base_;  // the epoch's batch index of order_'s first batch
  bool replay_;                     // EpochPlan::replay, until the first batch
  const std::uint32_t echoes_done_;

  std::mutex feed_mutex_;
  std::uint64_t next_to_feed_ = 0;

  std::atomic<bool> cancelled_{false};
  std::mutex mutex_;
  std::condition_variable ready_cv_;
  std::deque<Slot*> ready_;
  std::uint64_t delivered_ = 0;              // fresh batches handed to the consumer
  std::atomic<std::uint32_t> in_flight_{0};  // fed into the graph, not yet ready
  std::exception_ptr error_;
  std::optional<std::chrono::steady_clock::time_point> starved_since_;
  bool resumed_ = false;  // the last next() timed out: this call continues the same request
  EchoStage echo_;
  Slot* current_ = nullptr;    // the last fresh batch, while the echo stage may repeat it
  bool reaugmenting_ = false;  // next() works on current_ without mutex_; cancel waits for it

  oneapi::tbb::flow::graph graph_;
  Node assemble_;
  Node normalize_;
  oneapi::tbb::flow::sequencer_node<Ticket> sequencer_;
  oneapi::tbb::flow::function_node<Ticket, oneapi::tbb::flow::continue_msg> deliver_;
};

/// Everything a loader owns. Shared by the Loader and by every Batch it handed out, so a batch
/// may outlive its loader. Thread-safe where EpochRun needs it (slot release, counters).
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
  /// Slots the graph and the consumer may hold at once: the prefetch depth (tuned with
  /// prefetch=auto), the consumer's batch and the echo stage's.
  [[nodiscard]] std::uint32_t slot_limit() const noexcept {
    return slot_limit_.load(std::memory_order_relaxed);
  }
  /// Drops one reference to `slot`; the last one returns it to the pool and feeds the graph.
  void release_ref(Slot* slot) noexcept;
  [[nodiscard]] LoaderStats stats() const;
  void reset_stats();
  void note_ready_depth(std::size_t depth) noexcept;

  // Device side of a batch (CUDA staging); CPU-device answers when there is none.
  void record_release(Slot& slot, std::span<void* const> streams);
  void wait_ready(const Slot& slot, void* stream) const;
  [[nodiscard]] const void* device_images(const Slot& slot) const;
  [[nodiscard]] const std::int64_t* device_labels(const Slot& slot) const;
  [[nodiscard]] formats::Layout output_layout() const;
  [[nodiscard]] std::array<std::int64_t, 4> output_shape(std::uint32_t count) const;

  // Work done by the graph's nodes.
  void assemble(Slot& slot);
  void normalize(Slot& slot);
  /// Echoes get a new flip (LoaderOptions::reaugment_echoes with a flipping --augment).
  [[nodiscard]] bool reaugments_echoes() const;
  /// Shows batch `from` as echo `repeat` in `target`: `from` itself when no consumer holds it,
  /// else a slot of the echo pool, so a delivery still held is never overwritten. Mirrors the
  /// samples whose flip differs from the fresh delivery and normalizes again (CPU), or queues
  /// the normalize kernel with the new flips on `from`'s device pixels (CUDA).
  void reaugment(Slot& from, Slot& target, std::uint32_t repeat);
  /// Fills a fresh slot with the `position`-th batch of `order` (labels, indices, count), batch
  /// `index` of `epoch`.
  void prepare(Slot& slot, std::uint64_t epoch, std::uint64_t position, std::uint64_t index,
               const std::vector<std::uint64_t>& order) const;

  const LoaderOptions options;
  const DatasetSource source;
  const formats::SampleShape shape;                 // one sample in a slot, before normalization
  const std::optional<ImageSamples> image_samples;  // the encoded (jpeg) layout's decoder
  const Sampler sampler;
  const NormalizeParams norm;
  const std::uint64_t batches_per_epoch;
  const EchoOptions echo;
  const std::unique_ptr<CudaStaging> staging;  // null on the CPU device
  SlotPool pool;
  /// One slot for re-augmented echoes of a batch the consumer still holds (empty when echoes
  /// are not re-augmented). Its slots return here, not to `pool`, and never feed the graph.
  SlotPool echo_pool;
  ChunkCache cache;
  StageCounters counters;
  std::atomic<bool> stopping{false};

 private:
  void copy_samples(Slot& slot, std::uint32_t begin, std::uint32_t end);
  void decode_samples(Slot& slot, std::uint32_t begin, std::uint32_t end);
  void decode_or_replace(Slot& slot, std::uint32_t position);
  void flip_samples(Slot& slot, std::uint32_t begin, std::uint32_t end) const;
  void maybe_stall(Stage stage, const Slot& slot);
  void normalize_on_host(Slot& slot);
  /// workers=auto / prefetch=auto: judges the window that ends at this delivery and applies
  /// the tuner's change (consumer thread).
  void maybe_tune();
  void apply(TuningChange change);
  [[nodiscard]] unsigned active_workers() const;

  [[nodiscard]] EpochPlan plan_from(const LoaderState& state) const;
  [[nodiscard]] const std::string& fingerprint() const;
  void note_delivery(const Delivery& d);

  std::optional<oneapi::tbb::global_control> thread_limit_;
  oneapi::tbb::task_arena arena_;
  std::optional<WorkerGate> gate_;  // workers=auto; destroyed before the arena
  std::atomic<std::uint32_t> slot_limit_{0};

  /// The tuner and the window it is judging (consumer thread); its log (any thread).
  struct Tuning {
    Tuner tuner;
    std::uint64_t batches = 0;  // fresh batches at the window's start
    std::int64_t start_ns = 0;
    std::int64_t wait_ns = 0;
    std::array<std::int64_t, kStageCount> busy_ns{};
  };
  std::optional<Tuning> tuning_;
  mutable std::mutex tuning_log_mutex_;
  std::vector<TuningChange> tuning_log_;
  std::mutex run_mutex_;
  std::shared_ptr<EpochRun> run_;

  std::atomic<std::int64_t> stats_start_ns_{0};
  std::atomic<std::uint64_t> batches_{0}, samples_{0}, fresh_{0}, echoed_{0}, reaugmented_{0};
  std::atomic<std::uint64_t> ready_sum_{0}, ready_count_{0}, ready_max_{0}, ready_last_{0};
  std::atomic<std::uint64_t> chunk_reads_{0}, bytes_read_{0}, skipped_{0};

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
  friend class EpochRun;
};

}  // namespace gpufeed::detail
