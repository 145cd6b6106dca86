#include "slot_pool.hpp"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <new>

namespace gpufeed::pipeline::detail {

void HostFree::operator()(void* p) const noexcept {
  if (pinned) {
    cudaFreeHost(p);
  } else {
    std::free(p);
  }
}

HostBuffer allocate_aligned(std::uint64_t bytes) {
  constexpr std::size_t kAlign = 64;
  const std::size_t rounded = ((bytes + kAlign - 1) / kAlign) * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded);
  if (p == nullptr) throw std::bad_alloc();
  return HostBuffer(static_cast<std::uint8_t*>(p), HostFree{false});
}

std::array<std::int64_t, 4> SlotFormat::output_shape(std::uint32_t count) const {
  const auto n = static_cast<std::int64_t>(count);
  const auto c = static_cast<std::int64_t>(sample.channels);
  const auto h = static_cast<std::int64_t>(sample.height);
  const auto w = static_cast<std::int64_t>(sample.width);
  if (layout == formats::Layout::nhwc) return {n, h, w, c};
  return {n, c, h, w};
}

SlotPool::SlotPool(const SlotFormat& format, std::uint32_t slots, std::uint32_t batch_size,
                   std::uint64_t sample_bytes, std::uint64_t output_bytes,
                   const HostAllocator& allocate, bool echo_targets)
    : format_(format) {
  slots_.reserve(slots);
  free_.reserve(slots);
  for (std::uint32_t i = 0; i < slots; ++i) {
    auto slot = std::make_unique<Slot>();
    slot->id = i;
    slot->format = &format_;
    slot->echo_target = echo_targets;
    if (sample_bytes != 0) slot->raw = allocate(std::uint64_t{batch_size} * sample_bytes);
    if (output_bytes != 0)
      slot->images = allocate_aligned(std::uint64_t{batch_size} * output_bytes);
    slot->labels.resize(batch_size);
    slot->indices.resize(batch_size);
    slot->by_chunk.resize(batch_size);
    bytes_ += std::uint64_t{batch_size} * (sample_bytes + output_bytes + 20);
    free_.push_back(slot.get());
    slots_.push_back(std::move(slot));
  }
}

Slot* SlotPool::try_acquire(std::uint32_t max_in_use) {
  std::lock_guard lock(mutex_);
  if (full_locked(max_in_use)) return nullptr;
  Slot* slot = free_.back();
  free_.pop_back();
  return slot;
}

void SlotPool::release(Slot* slot) {
  std::lock_guard lock(mutex_);
  free_.push_back(slot);
}

bool SlotPool::full(std::uint32_t max_in_use) const {
  std::lock_guard lock(mutex_);
  return full_locked(max_in_use);
}

Slots::Slots(const SlotPlan& sizes, const SlotFormat& format, const HostAllocator& allocate_pixels)
    : plan(sizes),
      batches(format, sizes.batch_slots, sizes.batch_size, sizes.raw_bytes, sizes.output_bytes,
              allocate_pixels),
      echoes(format, sizes.echo_slots, sizes.batch_size, sizes.echo_raw_bytes, sizes.output_bytes,
             allocate_aligned, true) {}

bool Slots::all_in_use() const {
  return batches.full(limit.load(std::memory_order_relaxed));
}

bool Slots::unref(Slot* slot) noexcept {
  if (slot->refs.fetch_sub(1) != 1) return false;
  if (slot->echo_target) {
    echoes.release(slot);
    return false;
  }
  batches.release(slot);
  return true;
}

}  // namespace gpufeed::pipeline::detail
