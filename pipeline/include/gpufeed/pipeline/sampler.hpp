#pragma once
// Sample order and sharding: a pure function of (seed, epoch, rank, world size, order, dataset).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/base/knobs.hpp"
#include "gpufeed/formats/shard_map.hpp"

namespace gpufeed::pipeline {

std::string to_string(Order order);
/// Parses "sequential" | "random" | "chunk"; throws OptionError otherwise.
Order parse_order(const std::string& text);

/// This process's place in a distributed job.
struct Shard {
  std::uint32_t rank = 0;
  std::uint32_t world_size = 1;
  /// RANK and WORLD_SIZE as torchrun sets them; rank 0 of 1 when unset. Throws UsageError for
  /// malformed or inconsistent values.
  static Shard from_environment();
};

/// A stretch of an epoch run at one world size, in which every rank consumed
/// `samples_per_rank` samples of its shard. A job that restarts with another world size closes
/// the stretch it was in and starts a new one (Loader::state(), Loader::restore()).
struct EpochSegment {
  std::uint32_t world_size = 1;
  std::uint64_t samples_per_rank = 0;
  friend bool operator==(const EpochSegment&, const EpochSegment&) = default;
};

struct SamplerOptions {
  Order order = Order::chunk;
  std::uint64_t seed = 0;
  Shard shard{};
  /// DistributedSampler's drop_last: false pads the global order by wrapping around so every
  /// rank gets the same count; true drops the tail instead.
  bool drop_tail = false;
  /// Order::chunk: how many chunks are open (drawn from) at a time.
  std::uint64_t chunk_window = 16;
};

/// Produces the sample indices one rank visits in one epoch.
///
/// An epoch's global order is a function of (seed, epoch, order, dataset) only, never of the
/// world size. Sharding follows torch.utils.data.DistributedSampler: every rank gets
/// samples_per_rank() indices, ranks are disjoint (except the wrapped padding) and together
/// cover the dataset. Random and sequential orders hand out the global order strided by rank
/// (as DistributedSampler does); chunk order hands out contiguous runs, so each rank reads
/// about 1/world_size of the chunks. The permutation uses its own generator (SplitMix64 and
/// a Fisher-Yates shuffle), so it is the same on every platform and standard library.
///
/// Resuming: after closed segments (each a world size and the samples every rank consumed
/// in it), what is left of the epoch is the global order's positions no rank consumed, in
/// their order (padding dropped); it is dealt to the current world size by the same rule.
/// For random and sequential order that is the global order from the first unconsumed
/// position on; for chunk order it is each old rank's unread tail, one after another.
/// Immutable and thread-safe.
class Sampler {
 public:
  /// A dataset of `num_samples` in chunks of `samples_per_chunk` (one file).
  Sampler(std::uint64_t num_samples, std::uint64_t samples_per_chunk, SamplerOptions options);
  /// A dataset whose chunks lie as `chunks` says (shards; chunk order shuffles the chunks of
  /// every shard together).
  Sampler(formats::ShardMap chunks, SamplerOptions options);

  [[nodiscard]] std::uint64_t num_samples() const { return num_samples_; }
  [[nodiscard]] std::uint64_t samples_per_rank() const { return per_rank_; }
  [[nodiscard]] const SamplerOptions& options() const { return options_; }

  /// The indices this rank visits in `epoch`, in order: after the `closed` segments, from
  /// the `skip`-th sample of this rank's share on (the part of the current segment already
  /// consumed).
  [[nodiscard]] std::vector<std::uint64_t> epoch_order(std::uint64_t epoch,
                                                       std::span<const EpochSegment> closed = {},
                                                       std::uint64_t skip = 0) const;
  /// The epoch's order before sharding.
  [[nodiscard]] std::vector<std::uint64_t> global_order(std::uint64_t epoch) const;
  /// The samples of `epoch` no rank has consumed after `segments` (the last one may be the
  /// stretch in progress), in the order they are still to be dealt. Whatever the world size.
  [[nodiscard]] std::vector<std::uint64_t> unconsumed(std::uint64_t epoch,
                                                      std::span<const EpochSegment> segments) const;

 private:
  [[nodiscard]] std::uint64_t share_size(std::uint64_t samples, std::uint64_t world) const;
  /// Rank `rank` of `world`'s share of `order`: `per` samples, positions past the end wrapping.
  [[nodiscard]] std::vector<std::uint64_t> deal(const std::vector<std::uint64_t>& order,
                                                std::uint64_t rank, std::uint64_t world) const;
  /// The samples of `order` that no rank consumed in `segment`, in `order`'s order.
  [[nodiscard]] std::vector<std::uint64_t> remaining(const std::vector<std::uint64_t>& order,
                                                     const EpochSegment& segment) const;

  formats::ShardMap chunks_;
  std::uint64_t num_samples_;
  SamplerOptions options_;
  std::uint64_t per_rank_;
};

}  // namespace gpufeed::pipeline

// The names a trainer writes, also as gpufeed::X (docs/layout.md).
namespace gpufeed {
using pipeline::parse_order;
using pipeline::Shard;
using pipeline::to_string;
}  // namespace gpufeed
