#pragma once
// A node-local disk cache of an object's byte ranges (cache_dir): the chunks (or images) a
// loader fetched, kept as one file each under
//   CACHE_DIR/gpufeed-objects/<hash of the URL>-<hash of the ETag>/<offset>-<length>
// so a replaced object (another ETag) is never served from an older copy. Files are written
// under a temporary name and renamed into place: the ranks of a node share the directory, and
// a rank killed mid-write leaves only a temporary file, which no read takes (and the next cache
// opened on the directory removes once its writer is gone). The whole directory is kept within
// a byte budget by removing the least recently used files.
//
// Writes happen on a thread of the cache's own ("gpufeed-cache"), never on the read path: a
// range read is queued (kQueueBytes at most) and the read goes on; when the queue is full the
// range is not cached (counted as dropped). The writer runs at idle priority (SCHED_IDLE): only
// on CPU time no other thread wants, so filling the cache never slows loading or training; on
// a machine with no idle core it caches less per epoch, and the next epoch caches the rest. A range
// fetched into a buffer of the reader's own (a planned GET's) is queued without a copy, holding
// that buffer until it is written; any other range is copied in. Queued ranges are served from the
// queue. A write that fails (a full disk, a quota, an I/O error) stops the caching with one line on
// standard error; reading goes on from object storage. flush() and the destructor write what is
// queued on the calling thread, beside the writer, and the destructor joins it.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpufeed/storage/byte_source.hpp"

namespace gpufeed::storage {

class DiskCache {
 public:
  /// Ranges copied and waiting for the writer, in bytes, at most.
  static constexpr std::uint64_t kQueueBytes = std::uint64_t{64} << 20;

  /// `budget_bytes` 0: half the free space of the filesystem when the cache is opened. Throws
  /// IoError when the directory cannot be created or written.
  /// `queue_bytes`: what the writer's queue holds at most.
  DiskCache(const std::string& dir, std::uint64_t budget_bytes, const std::string& url,
            const std::string& etag, std::uint64_t queue_bytes = kQueueBytes);
  ~DiskCache();
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  [[nodiscard]] const std::string& dir() const { return object_dir_; }
  [[nodiscard]] std::uint64_t budget_bytes() const { return budget_; }

  /// Copies the cached extent into `out` (exactly e.length bytes), from the queue or its file;
  /// false when it is not cached (or its file is not whole: then it is removed).
  bool read(const Extent& e, std::span<std::uint8_t> out) const;
  /// True when the extent is queued or has a file (no read).
  [[nodiscard]] bool contains(const Extent& e) const;
  /// Queues a copy of `bytes` as extent `e` for the writer and returns; not cached when the
  /// queue is full or caching stopped. The writer keeps it, then removes least recently used
  /// files while the directory holds more than the budget.
  void write(const Extent& e, std::span<const std::uint8_t> bytes);
  /// The same without a copy: `bytes` lie in `owner`'s buffer of `owner_bytes`, which the queue
  /// holds until the writer is done with them (counted once against the queue's limit, however
  /// many of its ranges are queued).
  void write_shared(const Extent& e, std::shared_ptr<const std::uint8_t[]> owner,
                    std::uint64_t owner_bytes, std::span<const std::uint8_t> bytes);
  /// Writes what is queued on the calling thread, beside the writer, and returns once all of it
  /// is written (or dropped).
  void flush();

  [[nodiscard]] std::uint64_t hits() const { return hits_.load(); }
  [[nodiscard]] std::uint64_t misses() const { return misses_.load(); }
  [[nodiscard]] std::uint64_t written() const { return written_files_.load(); }
  /// Ranges not cached because the queue was full or caching had stopped.
  [[nodiscard]] std::uint64_t dropped() const { return dropped_.load(); }
  /// Why caching stopped (a failed write), or empty.
  [[nodiscard]] std::string stopped() const;

 private:
  using Key = std::pair<std::uint64_t, std::uint64_t>;  // offset, length
  struct Queued {
    std::shared_ptr<const std::uint8_t[]> owner;  // holds `bytes`
    std::span<const std::uint8_t> bytes;
  };

  void enqueue(const Extent& e, Queued queued, std::uint64_t owner_bytes);
  void release_locked(const Queued& queued);

  [[nodiscard]] std::string file_of(const Extent& e) const;
  void run();
  /// Takes the first queued range off order_ and writes it (the lock released meanwhile).
  void write_next(std::unique_lock<std::mutex>& lock);
  /// Writes one range to its file; throws IoError when it cannot.
  void keep(const Extent& e, std::span<const std::uint8_t> bytes);
  void evict();

  std::string root_;        // CACHE_DIR/gpufeed-objects
  std::string object_dir_;  // root_/<url hash>-<etag hash>
  std::uint64_t budget_ = 0;
  mutable std::atomic<std::uint64_t> hits_{0}, misses_{0};
  std::atomic<std::uint64_t> written_{0};  // bytes written since the last look at the total
  std::atomic<std::uint64_t> serial_{0};   // temporary names
  std::mutex evict_mutex_;
  std::atomic<std::uint64_t> used_{0};  // the directory's bytes at the last look
  std::atomic<std::uint64_t> written_files_{0}, dropped_{0};

  mutable std::mutex queue_mutex_;  // guards the queue, stopping_, stopped_, writing_
  std::condition_variable queue_cv_;
  std::map<Key, Queued> queued_;  // served by read() until written
  OwnerCharges owners_;           // the buffers queued ranges lie in, counted in queued_bytes_ once
  std::deque<Key> order_;         // the writer's order: first in, first out
  std::uint64_t queued_bytes_ = 0;
  const std::uint64_t queue_limit_;
  unsigned writing_ = 0;   // ranges taken off order_ and being written (the writer, flush())
  bool stopping_ = false;  // the destructor began
  std::string stopped_;    // why caching stopped
  std::thread writer_;     // last: starts once everything above is made
};

}  // namespace gpufeed::storage
