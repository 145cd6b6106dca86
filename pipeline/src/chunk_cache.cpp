#include "gpufeed/pipeline/chunk_cache.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace gpufeed {

struct ChunkCache::Spares {
  struct Buffer {
    std::unique_ptr<std::uint8_t[]> bytes;
    std::size_t capacity = 0;
  };

  explicit Spares(std::uint64_t limit) : limit_bytes(limit) {}

  /// The smallest spare that holds `bytes` without wasting more than an eighth of itself.
  Buffer take(std::size_t bytes) {
    std::lock_guard lock(mutex);
    auto best = buffers.end();
    for (auto it = buffers.begin(); it != buffers.end(); ++it) {
      if (it->capacity >= bytes && it->capacity - bytes <= it->capacity / 8 &&
          (best == buffers.end() || it->capacity < best->capacity)) {
        best = it;
      }
    }
    if (best == buffers.end()) return {};
    Buffer out = std::move(*best);
    *best = std::move(buffers.back());
    buffers.pop_back();
    held -= out.capacity;
    return out;
  }

  /// Keeps `buffer` for a later miss, or frees it when the spares are full.
  void give(Buffer buffer) {
    std::unique_lock lock(mutex);
    if (held != 0 && held + buffer.capacity > limit_bytes) {
      lock.unlock();
      return;  // freed here, outside the lock
    }
    held += buffer.capacity;
    buffers.push_back(std::move(buffer));
  }

  void clear() {
    std::vector<Buffer> dropped;
    std::lock_guard lock(mutex);
    dropped.swap(buffers);
    held = 0;
  }

  const std::uint64_t limit_bytes;
  std::mutex mutex;
  std::vector<Buffer> buffers;
  std::uint64_t held = 0;
};

ChunkCache::ChunkCache(std::uint64_t budget_bytes)
    : budget_(budget_bytes), spares_(std::make_shared<Spares>(budget_bytes / 8)) {}

std::shared_ptr<ChunkBuffer> ChunkCache::make_buffer(std::size_t bytes, bool* recycled) {
  Spares::Buffer buffer = spares_->take(bytes);
  *recycled = buffer.bytes != nullptr;
  if (!buffer.bytes) buffer = {std::make_unique_for_overwrite<std::uint8_t[]>(bytes), bytes};
  auto* chunk = new ChunkBuffer{std::move(buffer.bytes), bytes, buffer.capacity};
  // The last handle's release hands the buffer to the spares (which live as long as a handle).
  return {chunk, [spares = spares_](ChunkBuffer* c) {
            spares->give({std::move(c->bytes), c->capacity});
            delete c;
          }};
}

ChunkHandle ChunkCache::get(std::uint64_t id, std::size_t bytes, const LoadFn& load, bool* hit) {
  std::unique_lock lock(mutex_);
  for (;;) {
    auto it = entries_.find(id);
    if (it == entries_.end()) break;
    if (it->second.chunk) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      ++stats_.hits;
      if (hit) *hit = true;
      return it->second.chunk;
    }
    loaded_.wait(lock);  // another thread is loading it; its result (or failure) wakes us
  }
  ++stats_.misses;
  if (hit) *hit = false;
  entries_.emplace(id, Entry{nullptr, lru_.end()});
  lock.unlock();

  std::shared_ptr<ChunkBuffer> chunk;
  bool recycled = false;
  try {
    chunk = make_buffer(bytes, &recycled);
    load({chunk->bytes.get(), bytes});
  } catch (...) {
    lock.lock();
    entries_.erase(id);
    loaded_.notify_all();
    throw;
  }

  lock.lock();
  Entry& entry = entries_.at(id);
  entry.chunk = chunk;
  lru_.push_front(id);
  entry.lru = lru_.begin();
  stats_.bytes += chunk->capacity;
  if (recycled) ++stats_.recycled;
  if (stats_.bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.bytes;
  evict_locked();
  loaded_.notify_all();
  return chunk;
}

void ChunkCache::evict_locked() {
  // Never evict the entry just loaded (front): a budget smaller than one chunk still works,
  // it just caches one chunk.
  while (stats_.bytes > budget_ && lru_.size() > 1) {
    const std::uint64_t victim = lru_.back();
    lru_.pop_back();
    auto it = entries_.find(victim);
    stats_.bytes -= it->second.chunk->capacity;
    entries_.erase(it);  // its buffer goes to the spares once no handle holds it
    ++stats_.evictions;
  }
}

bool ChunkCache::holds(std::uint64_t id) const {
  std::lock_guard lock(mutex_);
  const auto it = entries_.find(id);
  return it != entries_.end() && it->second.chunk != nullptr;
}

ChunkCacheStats ChunkCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void ChunkCache::clear() {
  std::lock_guard lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.chunk) {
      stats_.bytes -= it->second.chunk->capacity;
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  lru_.clear();
  spares_->clear();
}

}  // namespace gpufeed
