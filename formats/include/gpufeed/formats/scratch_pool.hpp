#pragma once
// Scratch objects (decode buffers, decoders) owned by a reader or a loader instead of by the
// threads that use them: a thread leases one for a sample or a chunk and gives it back, so they
// die with their owner, and one that grew past a limit on a huge input is trimmed on return.
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace gpufeed::formats::detail {

/// Drops the memory of a byte buffer that grew past `limit` (a huge sample or chunk), so one
/// odd input does not keep its size for the owner's lifetime.
inline void trim_buffer(std::vector<std::uint8_t>& buffer, std::size_t limit) {
  if (buffer.capacity() > limit) std::vector<std::uint8_t>().swap(buffer);
}

/// A pool of T: lease() takes a free one, or makes one when all are out (as many as threads use
/// it at once), and the lease returns it, passing it through `trim` first. Thread-safe.
template <typename T>
class ScratchPool {
 public:
  using Trim = void (*)(T&);

  explicit ScratchPool(Trim trim = nullptr) : trim_(trim) {}
  ScratchPool(const ScratchPool&) = delete;
  ScratchPool& operator=(const ScratchPool&) = delete;

  class Lease {
   public:
    Lease(ScratchPool& pool, std::unique_ptr<T> item) : pool_(&pool), item_(std::move(item)) {}
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease() {
      if (item_) pool_->give_back(std::move(item_));
    }
    T& operator*() const { return *item_; }
    T* operator->() const { return item_.get(); }

   private:
    ScratchPool* pool_;
    std::unique_ptr<T> item_;
  };

  [[nodiscard]] Lease lease() {
    {
      const std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<T> item = std::move(free_.back());
        free_.pop_back();
        return Lease(*this, std::move(item));
      }
      ++made_;
    }
    return Lease(*this, std::make_unique<T>());
  }

  /// Objects made so far (the most leased at once).
  [[nodiscard]] std::size_t made() const {
    const std::lock_guard lock(mutex_);
    return made_;
  }

 private:
  void give_back(std::unique_ptr<T> item) noexcept {
    if (trim_ != nullptr) trim_(*item);
    const std::lock_guard lock(mutex_);
    try {
      free_.push_back(std::move(item));
    } catch (...) {
      // Out of memory for the list: the object is simply freed.
    }
  }

  Trim trim_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<T>> free_;
  std::size_t made_ = 0;
};

}  // namespace gpufeed::formats::detail
