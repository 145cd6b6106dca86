#include "gpufeed/pipeline/chunk_cache.hpp"

namespace gpufeed {

ChunkCache::ChunkCache(std::uint64_t budget_bytes) : budget_(budget_bytes) {}

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
  try {
    chunk = std::make_shared<ChunkBuffer>();
    chunk->bytes = std::make_unique_for_overwrite<std::uint8_t[]>(bytes);
    chunk->size = bytes;
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
  stats_.bytes += bytes;
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
    stats_.bytes -= it->second.chunk->size;
    entries_.erase(it);
    ++stats_.evictions;
  }
}

ChunkCacheStats ChunkCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void ChunkCache::clear() {
  std::lock_guard lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.chunk) {
      stats_.bytes -= it->second.chunk->size;
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  lru_.clear();
}

}  // namespace gpufeed
