#pragma once
// Where the samples and chunks of a dataset made of several files (shards) lie. Sample and chunk
// numbers run on from shard to shard in the shards' order, so one file is a dataset of one
// shard, numbered as it always was. Chunks never span two shards: a shard's last chunk may hold
// fewer samples, and shards may be chunked differently.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpufeed::formats {

/// Immutable once built; thread-safe to read. Lookups are a binary search over the shards.
class ShardMap {
 public:
  struct Shard {
    std::uint64_t first_sample = 0;
    std::uint64_t samples = 0;
    std::uint64_t first_chunk = 0;
    std::uint64_t chunks = 0;
    std::uint64_t samples_per_chunk = 1;
  };
  /// A shard and a sample's (or chunk's) number within it.
  struct Place {
    std::size_t shard = 0;
    std::uint64_t local = 0;
  };

  ShardMap() = default;
  /// One file of `samples` in chunks of `samples_per_chunk` (0 counts as 1).
  static ShardMap single(std::uint64_t samples, std::uint64_t samples_per_chunk);
  /// Appends a shard of `samples` in chunks of `samples_per_chunk` (0 counts as 1).
  void add(std::uint64_t samples, std::uint64_t samples_per_chunk);

  [[nodiscard]] std::uint64_t num_samples() const { return samples_; }
  [[nodiscard]] std::uint64_t num_chunks() const { return chunks_; }
  [[nodiscard]] const std::vector<Shard>& shards() const { return shards_; }

  /// Where sample `sample` (< num_samples()) lies.
  [[nodiscard]] Place sample_place(std::uint64_t sample) const;
  /// Where chunk `chunk` (< num_chunks()) lies.
  [[nodiscard]] Place chunk_place(std::uint64_t chunk) const;
  /// The chunk that holds sample `sample`.
  [[nodiscard]] std::uint64_t chunk_of(std::uint64_t sample) const;
  /// The first sample of chunk `chunk`, and how many it holds.
  [[nodiscard]] std::uint64_t chunk_first_sample(std::uint64_t chunk) const;
  [[nodiscard]] std::uint64_t chunk_samples(std::uint64_t chunk) const;

 private:
  [[nodiscard]] std::size_t shard_of_sample(std::uint64_t sample) const;
  [[nodiscard]] std::size_t shard_of_chunk(std::uint64_t chunk) const;

  std::vector<Shard> shards_;
  std::uint64_t samples_ = 0;
  std::uint64_t chunks_ = 0;
};

}  // namespace gpufeed::formats
