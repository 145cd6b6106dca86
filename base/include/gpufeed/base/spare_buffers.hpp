#pragma once
// Large buffers kept for reuse instead of freed: a buffer taken again costs no page faults,
// where a fresh one of a chunk's size costs one per page (glibc maps and unmaps blocks that
// large, and zeroes every page the first time it is touched).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gpufeed {

/// Spare buffers under a byte limit. Thread-safe; a buffer given back when the spares are full
/// is freed. Held by shared_ptr where buffers come back from deleters that may outlive the
/// owner (take_shared).
class SpareBuffers : public std::enable_shared_from_this<SpareBuffers> {
 public:
  struct Buffer {
    std::unique_ptr<std::uint8_t[]> bytes;
    std::size_t capacity = 0;
  };

  explicit SpareBuffers(std::uint64_t limit_bytes) : limit_bytes_(limit_bytes) {}
  SpareBuffers(const SpareBuffers&) = delete;
  SpareBuffers& operator=(const SpareBuffers&) = delete;

  /// The smallest spare that holds `bytes` without wasting more than an eighth of itself, else
  /// a new buffer of `bytes` (not zeroed); `recycled` (if given) tells which.
  Buffer take(std::size_t bytes, bool* recycled = nullptr);
  /// take(bytes) as a shared buffer that comes back here when its last owner lets go (or is
  /// freed, once these spares are gone).
  std::shared_ptr<std::uint8_t[]> take_shared(std::size_t bytes);
  /// Adds a new buffer of `bytes`, its pages mapped in by the calling thread, while the spares
  /// hold less than `target_bytes`: a thread that takes buffers on a latency-critical path
  /// (an I/O thread) then finds them ready.
  void stock(std::size_t bytes, std::uint64_t target_bytes);
  /// Keeps `buffer` for a later take(), or frees it when the spares are full.
  void give(Buffer buffer);
  /// Frees every spare.
  void clear();
  /// Bytes held as spares now.
  [[nodiscard]] std::uint64_t held() const;

 private:
  const std::uint64_t limit_bytes_;
  mutable std::mutex mutex_;
  std::vector<Buffer> buffers_;
  std::uint64_t held_ = 0;
};

}  // namespace gpufeed
