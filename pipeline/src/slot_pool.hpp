#pragma once
// The fixed pool of host batch slots that circulate between the graph and the consumer.
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gpufeed::detail {

/// Frees memory from AlignedBuffer.
struct AlignedFree {
  void operator()(void* p) const noexcept;
};

/// One batch's memory: the uint8 pixels as read, the normalized output, labels and the
/// sample indices. Allocated once (64-byte aligned) and reused for every batch.
struct Slot {
  std::uint32_t id = 0;
  std::unique_ptr<std::uint8_t[], AlignedFree> raw;
  std::unique_ptr<float[], AlignedFree> images;
  std::vector<std::int64_t> labels;
  std::vector<std::uint64_t> indices;
  std::vector<std::uint32_t> by_chunk;  // batch positions sorted by chunk (scratch)
  // Filled per batch:
  std::uint32_t count = 0;
  std::uint64_t epoch = 0;
  std::uint64_t index = 0;  // position in the epoch
};

/// A bounded pool of slots. acquire() never allocates and never blocks: it returns nullptr
/// when every slot is in use, which is the pipeline's back-pressure. Thread-safe.
class SlotPool {
 public:
  SlotPool(std::uint32_t slots, std::uint32_t batch_size, std::uint64_t sample_bytes);

  Slot* try_acquire();
  void release(Slot* slot);

  [[nodiscard]] std::uint32_t size() const { return static_cast<std::uint32_t>(slots_.size()); }
  [[nodiscard]] std::uint32_t available() const;
  /// Host bytes held by all slots.
  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }

 private:
  std::vector<std::unique_ptr<Slot>> slots_;
  mutable std::mutex mutex_;
  std::vector<Slot*> free_;
  std::uint64_t bytes_ = 0;
};

}  // namespace gpufeed::detail
