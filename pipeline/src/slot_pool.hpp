#pragma once
// The fixed pool of host batch slots that circulate between the graph and the consumer.
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "gpufeed/base/device.hpp"
#include "gpufeed/formats/sample_shape.hpp"
#include "gpufeed/pipeline/dtype.hpp"
#include "slot_plan.hpp"

namespace gpufeed::pipeline::detail {

/// Frees host memory: with cudaFreeHost when it was pinned, std::free otherwise.
struct HostFree {
  bool pinned = false;
  void operator()(void* p) const noexcept;
};
using HostBuffer = std::unique_ptr<std::uint8_t[], HostFree>;

/// Allocates `bytes` of host memory for slot pixels (64-byte aligned at least).
using HostAllocator = std::function<HostBuffer(std::uint64_t bytes)>;
/// Plain aligned host memory.
HostBuffer allocate_aligned(std::uint64_t bytes);

struct DeviceSlot;  // a slot's device buffers and events (cuda/staging.hpp)
struct DeviceSlotFree {
  void operator()(DeviceSlot* d) const noexcept;
};

/// What a pool's slots deliver, the same for every batch: fixed when the pool is made.
struct SlotFormat {
  Device device;                                   ///< where the output lives
  DType dtype = DType::float32;                    ///< the output's element type
  formats::Layout layout = formats::Layout::nchw;  ///< the output's layout
  formats::SampleShape sample;                     ///< one sample, before normalization

  /// The output dimensions of `count` samples: [count, C, H, W] for NCHW, [count, H, W, C] for
  /// NHWC.
  [[nodiscard]] std::array<std::int64_t, 4> output_shape(std::uint32_t count) const;
};

/// One batch's memory: the uint8 pixels as read, the normalized output (host, for the CPU
/// device; device memory in `device` for CUDA), labels and the sample indices. Allocated once
/// and reused for every batch. `refs` counts the Batch handles (echoes share a slot) plus the
/// echo stage's hold; the slot returns to the pool when it drops to zero.
struct Slot {
  std::uint32_t id = 0;
  const SlotFormat* format = nullptr;  // the pool's
  bool echo_target = false;  // the echo pool's: holds re-augmented echoes, never fresh batches
  HostBuffer raw;
  HostBuffer images;  // float32 NCHW, CPU device only
  std::unique_ptr<DeviceSlot, DeviceSlotFree> device;
  std::atomic<std::uint32_t> refs{0};
  std::vector<std::int64_t> labels;
  std::vector<std::uint64_t> indices;
  std::vector<std::uint32_t> by_chunk;  // batch positions sorted by chunk (scratch)
  // Filled per batch:
  std::uint32_t count = 0;
  std::uint64_t epoch = 0;
  std::uint64_t index = 0;   // position in the epoch
  std::uint32_t repeat = 0;  // the echo repeat the pixels (CPU) or the output (CUDA) show

  /// The normalized output and the labels in device memory; null on the CPU device.
  [[nodiscard]] const void* device_images() const noexcept;
  [[nodiscard]] const std::int64_t* device_labels() const noexcept;
};

/// A bounded pool of slots. acquire() never allocates and never blocks: it returns nullptr
/// when every slot is in use, which is the pipeline's back-pressure. Thread-safe.
class SlotPool {
 public:
  /// `format`: what the slots deliver; `sample_bytes`: host pixels per sample (0: none);
  /// `output_bytes`: host output per sample (0 when the output lives on a device).
  /// `echo_targets`: the slots hold re-augmented echoes (Slot::echo_target).
  SlotPool(const SlotFormat& format, std::uint32_t slots, std::uint32_t batch_size,
           std::uint64_t sample_bytes, std::uint64_t output_bytes, const HostAllocator& allocate,
           bool echo_targets = false);

  /// A free slot, or nullptr when every slot, or `max_in_use` of them, is in use.
  Slot* try_acquire(std::uint32_t max_in_use = ~0u);
  /// Every slot, or `max_in_use` of them, is in use: try_acquire() would return nullptr.
  [[nodiscard]] bool full(std::uint32_t max_in_use) const;
  void release(Slot* slot);

  [[nodiscard]] std::uint32_t size() const { return static_cast<std::uint32_t>(slots_.size()); }
  /// Every slot, for attaching device buffers once at start-up.
  [[nodiscard]] const std::vector<std::unique_ptr<Slot>>& slots() const { return slots_; }
  /// Host bytes held by all slots.
  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }

 private:
  [[nodiscard]] bool full_locked(std::uint32_t max_in_use) const {
    return free_.empty() || slots_.size() - free_.size() >= max_in_use;
  }

  const SlotFormat format_;  // every slot points to it
  std::vector<std::unique_ptr<Slot>> slots_;
  mutable std::mutex mutex_;
  std::vector<Slot*> free_;
  std::uint64_t bytes_ = 0;
};

/// A loader's slots, as `plan` sizes them: the batch slots the graph fills, of which at most
/// `limit` are in use at once (the prefetch depth plus the consumer's and the echo stage's;
/// prefetch=auto changes it while the loader runs), and the echo pool's slot for re-augmented
/// echoes of a batch the consumer still holds (empty when echoes are not re-augmented; it never
/// feeds the graph).
struct Slots {
  /// `allocate_pixels`: the batch slots' host pixels (pinned for a CUDA device).
  Slots(const SlotPlan& sizes, const SlotFormat& format, const HostAllocator& allocate_pixels);

  const SlotPlan plan;
  SlotPool batches;
  SlotPool echoes;
  std::atomic<std::uint32_t> limit{0};

  /// Batches prepared ahead of the consumer, at most: the limit less the extra slots.
  [[nodiscard]] unsigned prefetch() const {
    return limit.load(std::memory_order_relaxed) - plan.extra_slots;
  }
  void set_prefetch(unsigned depth) {
    limit.store(depth + plan.extra_slots, std::memory_order_relaxed);
  }

  /// A free batch slot within the limit, or nullptr (back-pressure).
  Slot* acquire() { return batches.try_acquire(limit.load(std::memory_order_relaxed)); }
  /// Every batch slot the limit allows is in use.
  [[nodiscard]] bool all_in_use() const;
  /// Drops one reference to `slot`; the last returns it to its pool. True when a batch slot
  /// came free, so the graph can be fed.
  bool unref(Slot* slot) noexcept;
};

}  // namespace gpufeed::pipeline::detail
