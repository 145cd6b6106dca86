#include "gpufeed/pipeline/chunk_cache.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace gpufeed::pipeline {

ChunkCache::ChunkCache(std::uint64_t budget_bytes)
    : budget_(budget_bytes), spares_(std::make_shared<SpareBuffers>(budget_bytes / 8)) {}

std::shared_ptr<ChunkBuffer> ChunkCache::make_buffer(std::size_t bytes, bool* recycled) {
  SpareBuffers::Buffer buffer = spares_->take(bytes, recycled);
  auto* chunk = new ChunkBuffer{std::move(buffer.bytes), bytes, buffer.capacity, {}};
  // The last handle's release hands the buffer to the spares (which live as long as a handle).
  return {chunk, [spares = spares_](ChunkBuffer* c) {
            spares->give({std::move(c->bytes), c->capacity});
            delete c;
          }};
}

ChunkHandle ChunkCache::get(std::uint64_t id, std::size_t bytes, const LoadFn& load, bool* hit,
                            const ViewFn& view) {
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
    storage::SharedBytes shared = view ? view() : storage::SharedBytes{};
    if (shared && shared.bytes.size() == bytes) {
      chunk = std::make_shared<ChunkBuffer>(ChunkBuffer{nullptr, bytes, 0, std::move(shared)});
    } else {
      chunk = make_buffer(bytes, &recycled);
      load({chunk->bytes.get(), bytes});
    }
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
  charge_locked(*chunk);
  if (recycled) ++stats_.recycled;
  if (chunk->shared) ++stats_.views;
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
    release_locked(*it->second.chunk);
    entries_.erase(it);  // its buffer goes to the spares once no handle holds it
    ++stats_.evictions;
  }
}

void ChunkCache::charge_locked(const ChunkBuffer& chunk) {
  stats_.bytes += chunk.shared ? owners_.hold(chunk.shared.owner.get(), chunk.shared.owner_bytes)
                               : chunk.capacity;
}

void ChunkCache::release_locked(const ChunkBuffer& chunk) {
  stats_.bytes -= chunk.shared ? owners_.release(chunk.shared.owner.get()) : chunk.capacity;
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
      release_locked(*it->second.chunk);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  lru_.clear();
  spares_->clear();
}

}  // namespace gpufeed::pipeline
