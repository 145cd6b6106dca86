#pragma once
// The CUDA half of a loader: pinned host slots, a copy stream, the normalize kernel on a compute
// stream, and the events that order them. No device-wide or stream synchronization on the path
// a batch takes to the consumer.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/normalize_kernel.hpp"
#include "gpufeed/pipeline/normalize_spec.hpp"
#include "gpufeed/pipeline/stats.hpp"
#include "slot_pool.hpp"

namespace gpufeed::pipeline::detail {

/// A slot's device memory and events. `ready` marks the normalized batch; `released` is
/// recorded on the consumer's stream when the consumer lets go of the batch.
struct DeviceSlot {
  DeviceMemory raw;     // uint8 batch, as copied
  DeviceMemory out;     // normalized batch
  DeviceMemory labels;  // int64 [batch]
  PinnedMemory host_labels;
  CudaEvent copy_start, copied, normalize_start, ready, released;
  // Re-augmented echoes: per-sample flips, staged through two pinned host halves in turn.
  DeviceMemory augments;       // SampleAugment [batch]
  PinnedMemory host_augments;  // SampleAugment [2 * batch]
  CudaEvent augments_copied[2];
  bool augments_used[2] = {false, false};
  CudaEvent echo_read;  // recorded after an echo slot's kernel read this slot's pixels
  bool echo_read_recorded = false;
  // decode=gpu: the engines wrote these pixels (`decoded` marks it) but for the positions the
  // workers decoded into the host pixels, the only ones copied.
  CudaEvent decoded;
  bool engine_pixels = false;
  std::vector<std::uint32_t> host_positions;
  bool used = false;               // events have been recorded at least once
  bool released_recorded = false;  // `released` belongs to the current batch
};

struct StagingStats {
  bool pinned = true;  ///< false: pinning failed, slots are pageable
  std::uint64_t pinned_bytes = 0;
  std::uint64_t device_bytes = 0;
  double pinned_h2d_bytes_per_s = 0;    ///< measured at start, one batch per copy
  double pageable_h2d_bytes_per_s = 0;  ///< the same from pageable memory
};

/// Owns the streams and does the device work for every slot. Thread-safe: submit() and
/// reclaim() are called from the loader's workers for different slots at once.
///
/// Ordering, all with events (the host waits only in reclaim(), on a worker, for a copy that was
/// queued a whole pool of batches earlier):
///   copy stream:    [wait ready of this slot's last batch] H2D pixels + labels, record copied
///   compute stream: wait copied, [wait released], normalize kernel, record ready
///   consumer:       waits ready on its own stream (Batch::wait_ready), records released.
class CudaStaging {
 public:
  CudaStaging(int device, const NormalizeSpec& spec, std::uint32_t batch_size);

  [[nodiscard]] int device() const { return device_; }
  /// Pinned host memory; on failure, one warning and pageable memory from then on.
  HostBuffer allocate_host(std::uint64_t bytes);
  /// Allocates the slot's device buffers and events.
  void attach(Slot& slot);
  /// Before the slot's host pixels are written again: waits for its last copy and kernel
  /// (normally long finished) and adds their device time to the h2d and normalize counters.
  void reclaim(Slot& slot, StageCounters& counters);
  /// Queues the copy and the normalize kernel of an assembled slot; returns at once.
  void submit(Slot& slot);
  /// decode=gpu, before submit(): the slot's device pixels come from the engines (done when
  /// the slot's `decoded` event completes) except at `host_positions` (ascending), which the
  /// workers decoded into its host pixels: submit() copies those only.
  void expect_engine_pixels(Slot& slot, std::vector<std::uint32_t> host_positions);
  /// Queues the normalize kernel again on `source`'s device pixels with per-sample `flips`
  /// (1: mirrored) into `target`'s output (`source` itself, or an echo slot, which also gets the
  /// labels), after the consumer's release of `target`'s previous delivery. The host waits only
  /// for the flips copied two echoes earlier; `source` is reclaimed only after the kernel.
  void reaugment(Slot& source, Slot& target, const std::vector<std::uint8_t>& flips,
                 std::uint32_t repeat);
  /// Records the slot's release after the work queued so far on every one of `streams`.
  void record_release(Slot& slot, std::span<void* const> streams);
  void wait_ready(const Slot& slot, void* stream) const;
  [[nodiscard]] StagingStats stats() const;

 private:
  void measure_h2d();
  void copy_host_positions(const Slot& slot, cudaStream_t copy);

  const int device_;
  const NormalizeKernelArgs args_;
  const std::uint32_t batch_size_;
  const std::uint64_t sample_bytes_;
  const std::uint64_t out_sample_bytes_;
  CudaStream copy_stream_;
  CudaStream compute_stream_;
  CudaStream release_stream_;  // joins the streams of a batch used on more than one
  mutable std::mutex mutex_;
  StagingStats stats_;
};

}  // namespace gpufeed::pipeline::detail
