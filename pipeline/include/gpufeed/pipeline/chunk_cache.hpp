#pragma once
// The pipeline's own chunk cache: decoded chunks under a byte budget, shared by all readers.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>

#include "gpufeed/base/spare_buffers.hpp"
#include "gpufeed/storage/byte_source.hpp"

namespace gpufeed::pipeline {

/// One decoded chunk. Immutable once loaded; shared by every batch that reads from it. Its
/// bytes are its own buffer, or a view of the bytes its source holds (a planned GET's buffer,
/// kept alive by `shared`).
struct ChunkBuffer {
  /// The chunk's own buffer; null for a view.
  std::unique_ptr<std::uint8_t[]> bytes;
  /// The chunk's bytes.
  std::size_t size = 0;
  /// The buffer's bytes (>= size when it held a larger chunk before).
  std::size_t capacity = 0;
  /// A view's bytes and their owner.
  storage::SharedBytes shared;
  [[nodiscard]] const std::uint8_t* data() const {
    return bytes ? bytes.get() : shared.bytes.data();
  }
  [[nodiscard]] std::span<const std::uint8_t> span() const { return {data(), size}; }
};
using ChunkHandle = std::shared_ptr<const ChunkBuffer>;

struct ChunkCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  std::uint64_t recycled = 0;    ///< misses loaded into the buffer of an evicted chunk
  std::uint64_t views = 0;       ///< misses served as views of the source's bytes (no copy)
  std::uint64_t bytes = 0;       ///< buffer bytes held by the cache now
  std::uint64_t peak_bytes = 0;  ///< most ever held by the cache
};

/// A least-recently-used cache of decoded chunks with a byte budget.
///
/// get() returns the chunk, loading it on a miss with the caller's function outside the lock;
/// a second caller asking for a chunk that is being loaded waits for that load instead of
/// reading the file again. Chunks evicted while a handle still holds them stay alive until
/// the handle is dropped, so memory is bounded by the budget plus the chunks in use (one per
/// worker). Thread-safe. A load that throws leaves nothing behind; the next get() retries.
///
/// Buffers are recycled: an evicted chunk's buffer, once no handle holds it, waits among a few
/// spares (at most an eighth of the budget, or one buffer) for the next miss of a chunk that
/// fits it. Once the cache is full, a miss allocates nothing, so the process's peak memory
/// does not grow with the dataset (freed and reallocated chunk-sized blocks would otherwise
/// scatter over the allocator's per-thread arenas, which keep them).
///
/// A miss asks `view` first: a chunk its source already holds (a planned GET's buffer) is kept
/// as a view of those bytes, without a buffer or a copy. A view is charged the memory of the
/// buffer it keeps alive, once for all the chunks cached from that buffer.
class ChunkCache {
 public:
  using LoadFn = std::function<void(std::span<std::uint8_t> out)>;
  using ViewFn = std::function<storage::SharedBytes()>;

  explicit ChunkCache(std::uint64_t budget_bytes);
  ChunkCache(const ChunkCache&) = delete;
  ChunkCache& operator=(const ChunkCache&) = delete;

  /// The chunk `id` of `bytes` bytes; `load` fills it on a miss. `hit` (if given) tells which.
  ChunkHandle get(std::uint64_t id, std::size_t bytes, const LoadFn& load, bool* hit = nullptr,
                  const ViewFn& view = {});

  [[nodiscard]] std::uint64_t budget_bytes() const { return budget_; }
  [[nodiscard]] ChunkCacheStats stats() const;
  /// Whether chunk `id` is loaded and held now (a later get() may still miss: it can be evicted).
  [[nodiscard]] bool holds(std::uint64_t id) const;
  void clear();

 private:
  struct Entry {
    ChunkHandle chunk;  // null while loading
    std::list<std::uint64_t>::iterator lru;
  };
  void evict_locked();
  /// Counts `chunk`'s memory in the cache (a view: its owner's, the first time) or out of it.
  void charge_locked(const ChunkBuffer& chunk);
  void release_locked(const ChunkBuffer& chunk);
  /// A buffer for `bytes`: a spare that fits, else a new one. Outside the lock.
  std::shared_ptr<ChunkBuffer> make_buffer(std::size_t bytes, bool* recycled);

  const std::uint64_t budget_;
  // Evicted chunks' buffers awaiting reuse; outlives the cache while handles do.
  const std::shared_ptr<SpareBuffers> spares_;
  mutable std::mutex mutex_;
  std::condition_variable loaded_;
  std::unordered_map<std::uint64_t, Entry> entries_;
  std::list<std::uint64_t> lru_;  // front: most recently used; ready entries only
  storage::OwnerCharges owners_;  // the buffers cached views lie in, each charged once
  ChunkCacheStats stats_;
};

}  // namespace gpufeed::pipeline
