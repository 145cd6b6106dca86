#pragma once
// One move-only owner for every C handle (hid_t, file descriptors, tjhandle, cudaStream_t).
#include <utility>

namespace gpufeed {

/// Owns a C handle described by Traits:
///   using handle_type = ...;
///   static constexpr handle_type null() noexcept;
///   static void destroy(handle_type) noexcept;
/// Move-only; destroys the handle exactly once.
template <typename Traits>
class UniqueHandle {
 public:
  using handle_type = typename Traits::handle_type;

  constexpr UniqueHandle() noexcept : h_(Traits::null()) {}
  constexpr explicit UniqueHandle(handle_type h) noexcept : h_(h) {}
  UniqueHandle(UniqueHandle&& o) noexcept : h_(o.release()) {}
  UniqueHandle& operator=(UniqueHandle&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(); }

  [[nodiscard]] handle_type get() const noexcept { return h_; }
  [[nodiscard]] handle_type release() noexcept { return std::exchange(h_, Traits::null()); }
  void reset(handle_type h = Traits::null()) noexcept {
    handle_type old = std::exchange(h_, h);
    if (old != Traits::null()) Traits::destroy(old);
  }
  explicit operator bool() const noexcept { return h_ != Traits::null(); }

 private:
  handle_type h_;
};

struct FdTraits {
  using handle_type = int;
  static constexpr int null() noexcept { return -1; }
  static void destroy(int fd) noexcept;
};
/// An owned POSIX file descriptor.
using UniqueFd = UniqueHandle<FdTraits>;

}  // namespace gpufeed
