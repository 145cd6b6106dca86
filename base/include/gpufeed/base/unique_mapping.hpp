#pragma once
// The owner of a read-only memory mapping of a file.
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace gpufeed {

/// A read-only, private mapping of a file's first `size` bytes, unmapped exactly once when its
/// owner goes. Move-only.
class UniqueMapping {
 public:
  UniqueMapping() noexcept = default;
  /// Maps `size` bytes of `fd` from offset 0; an empty mapping, with errno set, when mmap fails.
  /// The descriptor may be closed afterwards.
  [[nodiscard]] static UniqueMapping map_read_only(int fd, std::size_t size) noexcept;

  UniqueMapping(UniqueMapping&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  UniqueMapping& operator=(UniqueMapping&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  UniqueMapping(const UniqueMapping&) = delete;
  UniqueMapping& operator=(const UniqueMapping&) = delete;
  ~UniqueMapping() { reset(); }

  [[nodiscard]] std::span<const std::uint8_t> bytes() const noexcept {
    return {static_cast<const std::uint8_t*>(data_), size_};
  }
  explicit operator bool() const noexcept { return data_ != nullptr; }
  /// Unmaps now (a no-op for an empty mapping).
  void reset() noexcept;

 private:
  UniqueMapping(void* data, std::size_t size) noexcept : data_(data), size_(size) {}

  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace gpufeed
