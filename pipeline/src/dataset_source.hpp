#pragma once
// The dataset a loader reads (one file, or shards read as one), in whichever of the schema's
// layouts it is.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "gpufeed/formats/probe.hpp"
#include "gpufeed/formats/shards.hpp"
#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed::pipeline::detail {

/// Exactly one of `raw` and `jpeg` is set. Immutable after open(); thread-safe to read.
struct DatasetSource {
  formats::FileLayout layout = formats::FileLayout::raw;
  std::unique_ptr<formats::RawShards> raw;
  std::unique_ptr<formats::JpegShards> jpeg;

  /// Opens `options.source.path` (or `paths`): its shards, with the reader their layout needs;
  /// throws FormatError for a bad file or shard and UsageError for options the layout cannot
  /// honour.
  static DatasetSource open(const LoaderOptions& options);

  /// The open reader, whichever layout it reads.
  [[nodiscard]] const formats::ShardedDataset& dataset() const {
    if (raw) return *raw;
    return *jpeg;
  }
  /// Where each sample and chunk lies among the shards.
  [[nodiscard]] const formats::ShardMap& shard_map() const { return dataset().shard_map(); }

  [[nodiscard]] std::uint64_t num_samples() const;
  /// Samples stored together (1 for the jpeg layout: every sample is read on its own).
  [[nodiscard]] std::uint64_t samples_per_chunk() const;
  [[nodiscard]] const std::vector<std::int64_t>& labels() const;
  [[nodiscard]] const std::optional<formats::ChannelStats>& channel_stats() const;
  /// One sample as it sits in a batch slot: the stored shape (raw) or the decode size (jpeg).
  [[nodiscard]] formats::SampleShape slot_shape(const LoaderOptions& options) const;
};

}  // namespace gpufeed::pipeline::detail
