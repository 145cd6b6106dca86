#include "gpufeed/base/spare_buffers.hpp"

#include <cstdint>
#include <utility>

#include <sys/mman.h>

namespace gpufeed {

namespace {

constexpr std::size_t kPageBytes = 4096;

/// Maps in the pages of [p, p + bytes) on the calling thread, not on the one that fills them
/// later: in one madvise call where the kernel has MADV_POPULATE_WRITE (Linux 5.14), which saves
/// the fault taken for every page (0.1-0.15 core-seconds an epoch of 1.2 GB from object
/// storage), else one write a page.
void map_in(std::uint8_t* p, std::size_t bytes) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (address + kPageBytes - 1) & ~std::uintptr_t{kPageBytes - 1};
  const std::uintptr_t last = (address + bytes) & ~std::uintptr_t{kPageBytes - 1};
  volatile std::uint8_t* page = p;
#ifdef MADV_POPULATE_WRITE
  if (last > first &&
      madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE) == 0) {
    // The partial pages at either end, if any.
    if (first != address) page[0] = 0;
    if (last != address + bytes) page[bytes - 1] = 0;
    return;
  }
#endif
  for (std::size_t i = 0; i < bytes; i += kPageBytes) page[i] = 0;
}

}  // namespace

SpareBuffers::Buffer SpareBuffers::take(std::size_t bytes, bool* recycled) {
  {
    std::lock_guard lock(mutex_);
    auto best = buffers_.end();
    for (auto it = buffers_.begin(); it != buffers_.end(); ++it) {
      if (it->capacity >= bytes && it->capacity - bytes <= it->capacity / 8 &&
          (best == buffers_.end() || it->capacity < best->capacity)) {
        best = it;
      }
    }
    if (best != buffers_.end()) {
      Buffer out = std::move(*best);
      *best = std::move(buffers_.back());
      buffers_.pop_back();
      held_ -= out.capacity;
      if (recycled != nullptr) *recycled = true;
      return out;
    }
  }
  if (recycled != nullptr) *recycled = false;
  return {std::make_unique_for_overwrite<std::uint8_t[]>(bytes), bytes};
}

std::shared_ptr<std::uint8_t[]> SpareBuffers::take_shared(std::size_t bytes) {
  Buffer buffer = take(bytes);
  const std::size_t capacity = buffer.capacity;
  return {buffer.bytes.release(), [spares = weak_from_this(), capacity](std::uint8_t* p) {
            Buffer back{std::unique_ptr<std::uint8_t[]>(p), capacity};
            if (const std::shared_ptr<SpareBuffers> s = spares.lock()) s->give(std::move(back));
          }};
}

void SpareBuffers::stock(std::size_t bytes, std::uint64_t target_bytes) {
  if (held() >= target_bytes) return;
  Buffer buffer{std::make_unique_for_overwrite<std::uint8_t[]>(bytes), bytes};
  map_in(buffer.bytes.get(), bytes);
  give(std::move(buffer));
}

void SpareBuffers::give(Buffer buffer) {
  std::unique_lock lock(mutex_);
  if (held_ != 0 && held_ + buffer.capacity > limit_bytes_) {
    lock.unlock();
    return;  // freed here, outside the lock
  }
  held_ += buffer.capacity;
  buffers_.push_back(std::move(buffer));
}

void SpareBuffers::clear() {
  std::vector<Buffer> dropped;
  std::lock_guard lock(mutex_);
  dropped.swap(buffers_);
  held_ = 0;
}

std::uint64_t SpareBuffers::held() const {
  std::lock_guard lock(mutex_);
  return held_;
}

}  // namespace gpufeed
