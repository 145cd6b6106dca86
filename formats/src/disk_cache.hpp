#pragma once
// A node-local disk cache of an object's byte ranges (cache_dir): the chunks (or images) a
// loader fetched, kept as one file each under
//   CACHE_DIR/gpufeed-objects/<hash of the URL>-<hash of the ETag>/<offset>-<length>
// so a replaced object (another ETag) is never served from an older copy. Files are written
// under a temporary name and renamed into place: the ranks of a node share the directory, and
// a rank killed mid-write leaves only a temporary file, which no read takes (and the next cache
// opened on the directory removes once its writer is gone). The whole directory is kept within
// a byte budget by removing the least recently used files.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>

#include "byte_source.hpp"

namespace gpufeed::formats::detail {

class DiskCache {
 public:
  /// `budget_bytes` 0: half the free space of the filesystem when the cache is opened. Throws
  /// IoError when the directory cannot be created or written.
  DiskCache(const std::string& dir, std::uint64_t budget_bytes, const std::string& url,
            const std::string& etag);

  [[nodiscard]] const std::string& dir() const { return object_dir_; }
  [[nodiscard]] std::uint64_t budget_bytes() const { return budget_; }

  /// Copies the cached extent into `out` (exactly e.length bytes); false when it is not cached
  /// (or its file is not whole: then it is removed).
  bool read(const Extent& e, std::span<std::uint8_t> out) const;
  /// True when the extent has a file (no read).
  [[nodiscard]] bool contains(const Extent& e) const;
  /// Keeps `bytes` as extent `e`, then removes least recently used files while the directory
  /// holds more than the budget. A failed write (a full disk) only means it is not cached.
  void write(const Extent& e, std::span<const std::uint8_t> bytes);

  [[nodiscard]] std::uint64_t hits() const { return hits_.load(); }
  [[nodiscard]] std::uint64_t misses() const { return misses_.load(); }

 private:
  [[nodiscard]] std::string file_of(const Extent& e) const;
  void evict();

  std::string root_;        // CACHE_DIR/gpufeed-objects
  std::string object_dir_;  // root_/<url hash>-<etag hash>
  std::uint64_t budget_ = 0;
  mutable std::atomic<std::uint64_t> hits_{0}, misses_{0};
  std::atomic<std::uint64_t> written_{0};  // bytes written since the last look at the total
  std::atomic<std::uint64_t> serial_{0};   // temporary names
  std::mutex evict_mutex_;
  std::atomic<std::uint64_t> used_{0};  // the directory's bytes at the last look
};

}  // namespace gpufeed::formats::detail
