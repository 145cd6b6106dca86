#include "gpufeed/formats/shard_map.hpp"

#include <algorithm>
#include <string>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::formats {

ShardMap ShardMap::single(std::uint64_t samples, std::uint64_t samples_per_chunk) {
  ShardMap map;
  map.add(samples, samples_per_chunk);
  return map;
}

void ShardMap::add(std::uint64_t samples, std::uint64_t samples_per_chunk) {
  Shard s;
  s.first_sample = samples_;
  s.samples = samples;
  s.first_chunk = chunks_;
  s.samples_per_chunk = std::max<std::uint64_t>(1, samples_per_chunk);
  s.chunks = (samples + s.samples_per_chunk - 1) / s.samples_per_chunk;
  shards_.push_back(s);
  samples_ += s.samples;
  chunks_ += s.chunks;
}

namespace {

/// The last shard whose `first` (its first sample or chunk) is at or before `at`, `at` being
/// below `total`; a later (empty) shard with the same first wins.
std::size_t shard_holding(const std::vector<ShardMap::Shard>& shards, std::uint64_t at,
                          std::uint64_t total, std::uint64_t ShardMap::Shard::*first,
                          const char* what) {
  if (at >= total) {
    throw UsageError(std::string(what) + " " + std::to_string(at) +
                     " does not exist: the dataset has " + std::to_string(total) + " " + what +
                     "s");
  }
  const auto it = std::upper_bound(
      shards.begin(), shards.end(), at,
      [first](std::uint64_t v, const ShardMap::Shard& shard) { return v < shard.*first; });
  return static_cast<std::size_t>(it - shards.begin()) - 1;
}

}  // namespace

std::size_t ShardMap::shard_of_sample(std::uint64_t sample) const {
  return shard_holding(shards_, sample, samples_, &Shard::first_sample, "sample");
}

std::size_t ShardMap::shard_of_chunk(std::uint64_t chunk) const {
  return shard_holding(shards_, chunk, chunks_, &Shard::first_chunk, "chunk");
}

ShardMap::Place ShardMap::sample_place(std::uint64_t sample) const {
  if (shards_.size() == 1 && sample < samples_) return {0, sample};
  const std::size_t i = shard_of_sample(sample);
  return {i, sample - shards_[i].first_sample};
}

ShardMap::Place ShardMap::chunk_place(std::uint64_t chunk) const {
  if (shards_.size() == 1 && chunk < chunks_) return {0, chunk};
  const std::size_t i = shard_of_chunk(chunk);
  return {i, chunk - shards_[i].first_chunk};
}

std::uint64_t ShardMap::chunk_of(std::uint64_t sample) const {
  const Place p = sample_place(sample);
  const Shard& s = shards_[p.shard];
  return s.first_chunk + p.local / s.samples_per_chunk;
}

std::uint64_t ShardMap::chunk_first_sample(std::uint64_t chunk) const {
  const Place p = chunk_place(chunk);
  const Shard& s = shards_[p.shard];
  return s.first_sample + p.local * s.samples_per_chunk;
}

std::uint64_t ShardMap::chunk_samples(std::uint64_t chunk) const {
  const Place p = chunk_place(chunk);
  const Shard& s = shards_[p.shard];
  return std::min(s.samples_per_chunk, s.samples - p.local * s.samples_per_chunk);
}

}  // namespace gpufeed::formats
