#pragma once
// Installs one of the pipeline's test hooks (detail::TestHooks) for a scope, and a latch the
// hooks and the test thread meet at. A hook is a plain function: its state lives in statics.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "hooks.hpp"  // pipeline/src: the target must add it to its include path

namespace gpufeed::testing {

class ScopedHook {
 public:
  ScopedHook(std::atomic<void (*)()>& hook, void (*f)()) : hook_(hook) { hook_.store(f); }
  ~ScopedHook() { hook_.store(nullptr); }
  ScopedHook(const ScopedHook&) = delete;
  ScopedHook& operator=(const ScopedHook&) = delete;

 private:
  std::atomic<void (*)()>& hook_;
};

/// A counter threads wait on until it reaches a value (or a generous timeout passes, so that a
/// broken build fails instead of hanging).
class Counter {
 public:
  void add(std::uint64_t n = 1) {
    std::lock_guard lock(mutex_);
    value_ += n;
    cv_.notify_all();
  }
  /// True when the counter reached `target` within `timeout`.
  bool wait_for(std::uint64_t target,
                std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return value_ >= target; });
  }
  std::uint64_t value() {
    std::lock_guard lock(mutex_);
    return value_;
  }
  void reset() {
    std::lock_guard lock(mutex_);
    value_ = 0;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::uint64_t value_ = 0;
};

}  // namespace gpufeed::testing
