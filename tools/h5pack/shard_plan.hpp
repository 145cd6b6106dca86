#pragma once
// h5pack convert --shard-size / --part: OUT as a directory of shards of about a size, each a
// complete schema v1 file, written one after another (and by independent processes, each its
// part), joined by OUT/manifest.json. The stored order is drawn over the whole source first, so
// every shard holds a slice of one permutation: classes mix across the dataset, not within a
// shard. A shard is renamed into place only whole; a run started again skips the shards already
// there and whole, so an interrupted pack goes on from its last whole shard.
#include <cstdint>
#include <functional>
#include <string>

#include "h5pack/commands.hpp"

namespace gpufeed::tools::h5pack {

struct ShardPlan {
  std::uint64_t samples = 0;    ///< of the whole source
  std::uint64_t per_shard = 0;  ///< samples a shard holds (the last may hold fewer)
  std::uint64_t shards = 0;
  std::uint64_t part = 0;   ///< this process's part, of `parts`
  std::uint64_t parts = 1;  ///< shards k with k % parts == part are this part's

  [[nodiscard]] std::uint64_t first(std::uint64_t shard) const { return shard * per_shard; }
  [[nodiscard]] std::uint64_t count(std::uint64_t shard) const;
};

/// "4GB" (10^9), "4GiB" (2^30), "512MB", "64KiB", "1000000": bytes. Throws UsageError.
std::uint64_t parse_byte_size(const std::string& text, const char* flag);

/// True when the options ask for shards (--shard-size or --part).
bool wants_shards(const ConvertOptions& o);

/// The plan for `samples` of about `mean_sample_bytes` each (stored) under o.shard_size (one
/// shard when not given) and o.part. A shard of more than one chunk of `chunk_samples` holds
/// whole chunks (its size rounded up by less than a chunk): HDF5 stores a short chunk at its
/// full size, so every shard but the last would carry up to a chunk of padding. 1 for layouts
/// without fixed chunks (jpeg).
ShardPlan plan_shards(std::uint64_t samples, std::uint64_t mean_sample_bytes,
                      const ConvertOptions& o, std::uint64_t chunk_samples);

/// Writes this part's shards of `plan` under o.output, skipping those already whole:
/// `write(first, count, path)` packs samples [first, first + count) of the stored order into
/// `path`. Each shard is opened again once written and its sample count checked. Writes
/// OUT/manifest.json once every shard of the plan is there. Returns the exit code.
int write_shards(
    const ShardPlan& plan, const ConvertOptions& o,
    const std::function<void(std::uint64_t, std::uint64_t, const std::string&)>& write);

/// h5pack manifest DIR: writes DIR/manifest.json listing the shard files in DIR (sorted),
/// each opened and counted. Returns the exit code.
int run_manifest(const std::string& dir);

}  // namespace gpufeed::tools::h5pack
