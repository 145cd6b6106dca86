#include "slot_pool.hpp"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <new>

namespace gpufeed::detail {

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

SlotPool::SlotPool(std::uint32_t slots, std::uint32_t batch_size, std::uint64_t sample_bytes,
                   std::uint64_t output_bytes, const HostAllocator& allocate, bool echo_targets) {
  slots_.reserve(slots);
  free_.reserve(slots);
  for (std::uint32_t i = 0; i < slots; ++i) {
    auto slot = std::make_unique<Slot>();
    slot->id = i;
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

}  // namespace gpufeed::detail
