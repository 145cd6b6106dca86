#pragma once
// How many batch slots a loader allocates and how large they are: a pure function of its
// options and its samples, checked against the limits.
#include <cstdint>

#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed::pipeline::detail {

/// A loader's slot pools, sized once at start: the deepest prefetch queue the pools hold and the
/// depth the loader starts at (prefetch=auto moves between the two).
struct SlotPlan {
  std::uint32_t batch_size = 0;      ///< samples a slot holds
  std::uint32_t batch_slots = 0;     ///< the batch pool: max_prefetch plus extra_slots
  std::uint32_t echo_slots = 0;      ///< the echo pool: one for re-augmented echoes, else none
  std::uint32_t extra_slots = 0;     ///< batch slots besides the prefetched: the consumer's and
                                     ///< the echo stage's
  std::uint64_t slot_bytes = 0;      ///< host bytes of one batch slot, as the memory budget counts
  std::uint64_t raw_bytes = 0;       ///< host pixels per sample in a batch slot
  std::uint64_t echo_raw_bytes = 0;  ///< host pixels per sample in an echo slot (none on CUDA)
  std::uint64_t output_bytes = 0;    ///< host output per sample (none when it lives on a device)
  bool tuned_prefetch = false;       ///< prefetch=auto
  unsigned start_prefetch = 0;       ///< the prefetch depth the loader starts at
  unsigned max_prefetch = 0;         ///< the deepest prefetch queue the batch pool holds
};

/// The slots for `options` with samples of `sample_bytes` (uint8 pixels); `staging`: the output
/// lives on a CUDA device; `reaugments_echoes`: echoes get a slot of their own; `keeps_raw`: the
/// batch slots hold the uint8 pixels (else they go straight into the output). Throws
/// OptionError for a prefetch depth out of range or pools over the 64 GiB limit.
SlotPlan plan_slots(const LoaderOptions& options, std::uint64_t sample_bytes, bool staging,
                    bool reaugments_echoes, bool keeps_raw);

}  // namespace gpufeed::pipeline::detail
