#include "slot_plan.hpp"

#include <algorithm>
#include <string>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::pipeline::detail {

namespace {

constexpr std::uint64_t kMaxPoolBytes = 64ull << 30;
constexpr std::uint64_t kDefaultMemoryBudget = 1ull << 30;  // prefetch=auto
constexpr unsigned kMaxAutoPrefetch = 16;
constexpr unsigned kStartPrefetch = 2;  // prefetch=auto starts here

/// Host bytes a batch slot holds per byte of uint8 sample: the sample as read (1) and its
/// float32 output on the CPU device (4). The budget counts both on every device.
constexpr std::uint64_t kSlotBytesPerSampleByte = 1 + sizeof(float);

/// prefetch=auto: the deepest queue the memory budget holds, 1 to 16 batches.
unsigned max_auto_prefetch(const LoaderOptions& o, const SlotPlan& plan) {
  const std::uint64_t budget =
      o.resources.memory_bytes != 0 ? o.resources.memory_bytes : kDefaultMemoryBudget;
  const std::uint64_t per_slot = std::max<std::uint64_t>(1, plan.slot_bytes);
  const std::uint64_t fits = budget / per_slot;
  const std::uint64_t extra = plan.extra_slots;
  return static_cast<unsigned>(
      std::clamp<std::uint64_t>(fits > extra ? fits - extra : 1, 1, kMaxAutoPrefetch));
}

}  // namespace

SlotPlan plan_slots(const LoaderOptions& o, std::uint64_t sample_bytes, bool staging,
                    bool reaugments_echoes, bool keeps_raw) {
  SlotPlan plan;
  // The range of a fixed prefetch is checked with every field's (check_options()).
  plan.tuned_prefetch = o.resources.prefetch.is_auto();
  plan.batch_size = o.sampling.batch_size;
  // Besides the prefetched batches: the consumer's, and the one the echo stage keeps for
  // repeating.
  plan.extra_slots = 1 + (o.echo.enabled() ? 1 : 0);
  plan.slot_bytes = std::uint64_t{o.sampling.batch_size} * sample_bytes * kSlotBytesPerSampleByte;
  plan.max_prefetch =
      plan.tuned_prefetch ? max_auto_prefetch(o, plan) : o.resources.prefetch.value_or(1);
  plan.start_prefetch =
      plan.tuned_prefetch ? std::min(kStartPrefetch, plan.max_prefetch) : plan.max_prefetch;
  plan.batch_slots = plan.max_prefetch + plan.extra_slots;
  const std::uint64_t bytes = std::uint64_t{plan.batch_slots} * plan.slot_bytes;
  if (bytes > kMaxPoolBytes) {
    throw OptionError("batch_size", "{batch_size}=" + std::to_string(o.sampling.batch_size) +
                                        " with {prefetch}=" + o.resources.prefetch.str() +
                                        " needs " + std::to_string(bytes >> 20) +
                                        " MiB of batch slots (limit " +
                                        std::to_string(kMaxPoolBytes >> 20) +
                                        " MiB); lower {batch_size} or {prefetch}");
  }
  // On a CUDA device an echo is made from the source's device pixels: no host pixels.
  plan.echo_slots = reaugments_echoes ? 1 : 0;
  plan.raw_bytes = keeps_raw ? sample_bytes : 0;
  plan.echo_raw_bytes = staging ? 0 : sample_bytes;
  plan.output_bytes = staging ? 0 : sample_bytes * dtype_size(o.output.dtype);
  return plan;
}

}  // namespace gpufeed::pipeline::detail
