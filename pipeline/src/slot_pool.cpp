#include "slot_pool.hpp"

#include <cstdlib>
#include <new>

namespace gpufeed::detail {

void AlignedFree::operator()(void* p) const noexcept {
  std::free(p);
}

namespace {

template <typename T>
std::unique_ptr<T[], AlignedFree> allocate_aligned(std::uint64_t count) {
  constexpr std::size_t kAlign = 64;
  const std::size_t bytes = ((count * sizeof(T) + kAlign - 1) / kAlign) * kAlign;
  void* p = std::aligned_alloc(kAlign, bytes == 0 ? kAlign : bytes);
  if (p == nullptr) throw std::bad_alloc();
  return std::unique_ptr<T[], AlignedFree>(static_cast<T*>(p));
}

}  // namespace

SlotPool::SlotPool(std::uint32_t slots, std::uint32_t batch_size, std::uint64_t sample_bytes) {
  slots_.reserve(slots);
  free_.reserve(slots);
  for (std::uint32_t i = 0; i < slots; ++i) {
    auto slot = std::make_unique<Slot>();
    slot->id = i;
    slot->raw = allocate_aligned<std::uint8_t>(std::uint64_t{batch_size} * sample_bytes);
    slot->images = allocate_aligned<float>(std::uint64_t{batch_size} * sample_bytes);
    slot->labels.resize(batch_size);
    slot->indices.resize(batch_size);
    slot->by_chunk.resize(batch_size);
    bytes_ += std::uint64_t{batch_size} * sample_bytes * (1 + sizeof(float)) +
              std::uint64_t{batch_size} * 16;
    free_.push_back(slot.get());
    slots_.push_back(std::move(slot));
  }
}

Slot* SlotPool::try_acquire() {
  std::lock_guard lock(mutex_);
  if (free_.empty()) return nullptr;
  Slot* slot = free_.back();
  free_.pop_back();
  return slot;
}

void SlotPool::release(Slot* slot) {
  std::lock_guard lock(mutex_);
  free_.push_back(slot);
}

std::uint32_t SlotPool::available() const {
  std::lock_guard lock(mutex_);
  return static_cast<std::uint32_t>(free_.size());
}

}  // namespace gpufeed::detail
