#pragma once
// One thread's fixed-capacity ring of closed ranges.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpufeed/profiler/range_event.hpp"

namespace gpufeed::profiler::detail {

/// Single writer (the owning thread), any number of concurrent readers; the writer never
/// blocks. Each slot carries a sequence number (its event index + 1, 0 while being written), so a
/// reader keeps exactly the slots that were intact while it copied them (a seqlock per slot,
/// fence-free as in Boehm, "Can seqlocks get along with programming language memory models?").
/// Slot fields are release-stored / acquire-loaded atomics, so concurrent reads are well
/// defined and visible to ThreadSanitizer; on x86 they all compile to plain moves.
class ThreadRing {
 public:
  explicit ThreadRing(std::size_t capacity)
      : slots_(std::make_unique<Slot[]>(capacity)), capacity_(capacity) {}

  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

  void push(NameId name, std::uint32_t thread, std::int64_t begin_ns, std::int64_t end_ns,
            std::int64_t arg) noexcept {
    const std::uint64_t h = head_.load(std::memory_order_relaxed);
    Slot& s = slots_[h & (capacity_ - 1)];
    s.seq.store(0, std::memory_order_relaxed);
    // Release stores: a reader that sees any new field also sees seq == 0 afterwards.
    s.begin_ns.store(begin_ns, std::memory_order_release);
    s.end_ns.store(end_ns, std::memory_order_release);
    s.arg.store(arg, std::memory_order_release);
    s.name.store(name, std::memory_order_release);
    s.thread.store(thread, std::memory_order_release);
    s.seq.store(sequence(h), std::memory_order_release);
    head_.store(h + 1, std::memory_order_release);
  }

  /// Appends the events recorded since the last clear() that are still held; returns how many
  /// of those were lost (overwritten before or during the copy).
  std::uint64_t collect(std::vector<RangeEvent>& out) const {
    const std::uint64_t base = base_.load(std::memory_order_acquire);
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    const std::uint64_t first = std::max(base, head > capacity_ ? head - capacity_ : 0);
    std::uint64_t kept = 0;
    for (std::uint64_t i = first; i < head; ++i) {
      const Slot& s = slots_[i & (capacity_ - 1)];
      if (s.seq.load(std::memory_order_acquire) != sequence(i)) continue;
      const RangeEvent e = load(s);  // acquire loads: the re-check below cannot move above them
      if (s.seq.load(std::memory_order_relaxed) != sequence(i)) continue;
      out.push_back(e);
      ++kept;
    }
    return (head - base) - kept;
  }

  void clear() noexcept { base_.store(head_.load(std::memory_order_acquire)); }

 private:
  struct Slot {
    std::atomic<std::int64_t> begin_ns{0};
    std::atomic<std::int64_t> end_ns{0};
    std::atomic<std::int64_t> arg{0};
    std::atomic<NameId> name{0};
    std::atomic<std::uint32_t> thread{0};
    std::atomic<std::uint32_t> seq{0};  // sequence(index) once written, 0 while writing
  };
  /// Never 0; equal for two indices of one slot only if they are (2^32 - 1) * capacity apart.
  static std::uint32_t sequence(std::uint64_t index) noexcept {
    return static_cast<std::uint32_t>(index % 0xFFFFFFFFu) + 1;
  }
  static RangeEvent load(const Slot& s) noexcept {
    return {s.name.load(std::memory_order_acquire), s.thread.load(std::memory_order_acquire),
            s.begin_ns.load(std::memory_order_acquire), s.end_ns.load(std::memory_order_acquire),
            s.arg.load(std::memory_order_acquire)};
  }

  std::unique_ptr<Slot[]> slots_;
  std::size_t capacity_;  // a power of two
  alignas(64) std::atomic<std::uint64_t> head_{0};
  std::atomic<std::uint64_t> base_{0};  // head at the last clear()
};

}  // namespace gpufeed::profiler::detail
