#pragma once
// The delivery side of a loader's statistics: what the consumer was handed and how many
// batches were ready each time it asked. Lock-free: the consumer writes, any thread reads.
#include <atomic>
#include <cstdint>

#include "gpufeed/pipeline/stats.hpp"

namespace gpufeed::pipeline::detail {

class DeliveryCounters {
 public:
  /// Batches ready when the consumer asked; a negative depth (a timed-out request resumed) was
  /// counted when it was made.
  void note_ready_depth(std::int64_t depth) noexcept;
  void note_delivery(std::uint32_t samples, bool echoed) noexcept;
  [[nodiscard]] std::uint64_t fresh_batches() const noexcept {
    return fresh_.load(std::memory_order_relaxed);
  }
  /// Fills wall_ns (since the last reset), batches, samples, fresh and echoed batches and the
  /// queue depths of `s`.
  void fill(LoaderStats& s) const;
  /// Zero, and the wall time starts now.
  void reset() noexcept;

 private:
  std::atomic<std::int64_t> start_ns_{0};
  std::atomic<std::uint64_t> batches_{0}, samples_{0}, fresh_{0}, echoed_{0};
  std::atomic<std::uint64_t> ready_sum_{0}, ready_count_{0}, ready_max_{0}, ready_last_{0};
};

}  // namespace gpufeed::pipeline::detail
