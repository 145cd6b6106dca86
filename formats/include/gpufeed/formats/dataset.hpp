#pragma once
// What every dataset file tells, whatever its layout: the raw layout's DatasetReader and the
// jpeg layout's JpegDatasetReader both are a Dataset, so a caller that asks for the count, the
// labels or how the file is read never branches on the layout.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/formats/probe.hpp"
#include "gpufeed/storage/byte_source.hpp"
#include "gpufeed/storage/object_store.hpp"

namespace gpufeed::formats {

/// Mean and standard deviation per channel on the 0-255 scale.
struct ChannelStats {
  std::vector<float> mean;
  std::vector<float> stddev;
};

class Dataset {
 public:
  virtual ~Dataset() = default;

  [[nodiscard]] virtual FileLayout layout() const = 0;
  [[nodiscard]] virtual const std::string& path() const = 0;
  [[nodiscard]] virtual std::uint64_t num_samples() const = 0;
  /// Samples read together: a chunk's (raw layout; 1 when not chunked), a block's (jpeg:
  /// consecutive images of about kJpegBlockBytes).
  [[nodiscard]] virtual std::uint64_t samples_per_chunk() const = 0;
  /// Units read: chunks (raw), blocks (jpeg).
  [[nodiscard]] virtual std::uint64_t num_chunks() const = 0;
  /// How the samples are stored: "none", "gzip", "shuffle+gzip", ... (raw), "jpeg" (encoded
  /// images: JPEG, PNG or WebP).
  [[nodiscard]] virtual std::string compression() const = 0;
  /// How they are read: "index", "direct_chunk", "contiguous", "hyperslab" (raw);
  /// "jpeg contiguous (pread)", "jpeg hyperslab".
  [[nodiscard]] virtual std::string read_path_name() const = 0;
  /// True for a file in object storage (an s3:// path).
  [[nodiscard]] virtual bool remote() const = 0;
  /// A file in object storage: the counters of the client that reads it (monotonic; shared
  /// with the files opened under the same AWS configuration). Zeros for a local file.
  [[nodiscard]] virtual storage::ObjectStoreStats network() const = 0;
  /// The units (chunks, or images for the jpeg layout) the next reads will ask for, in that
  /// order, replacing any earlier plan: a file in object storage fetches them ahead of the
  /// reads within `settings` (many GETs in flight, neighbours coalesced, a memory budget); a
  /// local file ignores it. Reads outside the plan still work (one GET each). Thread-safe.
  virtual void plan_reads(std::span<const std::uint64_t> units,
                          const storage::ReadAhead& settings) const;
  /// The same for reads that go sample by sample (random order): by default each sample's
  /// unit, once, in first-use order; a layout whose units are larger than what one sample
  /// needs (jpeg blocks) plans the samples' own ranges.
  virtual void plan_sample_reads(std::span<const std::uint64_t> samples,
                                 const storage::ReadAhead& settings) const;
  /// The byte ranges of the file plan_reads() fetches for `units`, in order: none where the
  /// reads go through HDF5 (nothing to plan). The shards of a dataset are planned as one
  /// (storage::ReadGroup) from these.
  [[nodiscard]] virtual std::vector<storage::Extent> unit_extents(
      std::span<const std::uint64_t> units) const = 0;
  /// The byte ranges plan_sample_reads() fetches for `samples`: their units', by default.
  [[nodiscard]] virtual std::vector<storage::Extent> sample_extents(
      std::span<const std::uint64_t> samples) const;
  /// The bytes the file is read from (null for a dataset of several files).
  [[nodiscard]] virtual std::shared_ptr<const storage::ByteSource> byte_source() const = 0;

  /// One label per sample (-1 everywhere when the file has no labels).
  [[nodiscard]] const std::vector<std::int64_t>& labels() const { return meta_.labels; }
  /// /meta/mean and /meta/std when the file has them.
  [[nodiscard]] const std::optional<ChannelStats>& channel_stats() const {
    return meta_.channel_stats;
  }
  [[nodiscard]] const std::vector<std::string>& class_names() const { return meta_.class_names; }
  /// The schema version (0 for a file h5pack did not write).
  [[nodiscard]] int schema_version() const { return meta_.schema_version; }

 protected:
  /// What both layouts store beside the samples; each reader fills it when it opens the file.
  struct Metadata {
    std::vector<std::int64_t> labels;
    std::optional<ChannelStats> channel_stats;
    std::vector<std::string> class_names;
    int schema_version = 0;
  };
  Metadata meta_;

  Dataset() = default;
  Dataset(const Dataset&) = default;
  Dataset(Dataset&&) = default;
  Dataset& operator=(const Dataset&) = default;
  Dataset& operator=(Dataset&&) = default;
};

}  // namespace gpufeed::formats
