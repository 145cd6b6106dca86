#pragma once
// A dataset made of several schema files (shards) read as one: sample i of the dataset is a
// sample of one shard, numbered on from shard to shard in the shards' order (ShardMap). One
// file is a dataset of one shard. RawShards reads raw-layout shards chunk by chunk, JpegShards
// jpeg-layout shards image by image; both are a Dataset, with the labels of every shard in
// order, the class names they share and their channel statistics combined.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/shard_list.hpp"
#include "gpufeed/formats/shard_map.hpp"

namespace gpufeed::formats {

/// How the shards are opened beside each layout's reader options.
struct ShardOpening {
  /// cache_dir for the shards in object storage ("": none), and its budget (0: half the free
  /// space).
  std::string cache_dir;
  std::uint64_t cache_dir_bytes = 0;
  /// Shards in object storage fetched at once (a round trip each: the head and tail bytes its
  /// manifest names, else the object's first and last MiB). HDF5's own part of an open runs one
  /// shard at a time: the library is serial inside.
  unsigned parallel = 32;
};

/// What both layouts' shard sets share. Every shard is opened and checked at construction (the
/// objects' round trips in parallel); a shard that is missing, damaged, of another layout or shape,
/// or unlike what the manifest says throws FormatError (IoError when its bytes cannot be read)
/// naming it: "shard 3 of 8 (s3://b/train/shard-00003.h5): ...". Afterwards immutable; reads from
/// any thread.
class ShardedDataset : public Dataset {
 public:
  ShardedDataset(const ShardedDataset&) = delete;
  ShardedDataset& operator=(const ShardedDataset&) = delete;

  /// The dataset as the user named it (one file's path, the directory, the glob).
  [[nodiscard]] const std::string& path() const override { return name_; }
  [[nodiscard]] std::uint64_t num_samples() const override { return map_.num_samples(); }
  /// The first shard's: shards packed together are chunked alike.
  [[nodiscard]] std::uint64_t samples_per_chunk() const override;
  [[nodiscard]] std::uint64_t num_chunks() const override { return map_.num_chunks(); }
  [[nodiscard]] std::string compression() const override;
  /// Every read path the shards use, ", "-joined (one for shards packed together).
  [[nodiscard]] std::string read_path_name() const override;
  /// True when a shard is in object storage.
  [[nodiscard]] bool remote() const override;
  [[nodiscard]] storage::ObjectStoreStats network() const override;
  /// The units (or samples) of every shard planned as one (storage::ReadGroup): one order, one
  /// budget, one window of GETs in flight.
  void plan_reads(std::span<const std::uint64_t> units,
                  const storage::ReadAhead& settings) const override;
  void plan_sample_reads(std::span<const std::uint64_t> samples,
                         const storage::ReadAhead& settings) const override;
  /// One shard's; none for several (they are planned through the group).
  [[nodiscard]] std::vector<storage::Extent> unit_extents(
      std::span<const std::uint64_t> units) const override;
  [[nodiscard]] std::shared_ptr<const storage::ByteSource> byte_source() const override;

  [[nodiscard]] const ShardMap& shard_map() const { return map_; }
  [[nodiscard]] std::size_t num_shards() const { return shards_.size(); }
  [[nodiscard]] const Dataset& shard(std::size_t i) const { return *shards_.at(i); }

 protected:
  ShardedDataset() = default;
  /// Joins the opened shards: the map, labels, class names and channel statistics; checks them
  /// against `list` (a manifest's counts).
  void join(std::vector<const Dataset*> shards, const ShardList& list);
  /// "shard 3 of 8 (PATH)".
  [[nodiscard]] std::string describe(std::size_t shard) const;

 private:
  /// Plans each shard's part of `planned` (dataset units, or samples when `samples`).
  void plan_each(std::span<const std::uint64_t> planned, bool samples,
                 const storage::ReadAhead& settings) const;

  std::string name_;
  std::vector<const Dataset*> shards_;
  ShardMap map_;
  std::unique_ptr<storage::ReadGroup> group_;  // several shards, some in object storage
};

/// Raw-layout shards: chunk c of the dataset is a chunk of one shard (ShardMap::chunk_place).
class RawShards final : public ShardedDataset {
 public:
  RawShards(const ShardList& list, ReaderOptions options = {}, ShardOpening opening = {});
  ~RawShards() override;

  [[nodiscard]] FileLayout layout() const override { return FileLayout::raw; }
  [[nodiscard]] const DatasetReader& reader(std::size_t shard) const { return *readers_.at(shard); }
  /// Every shard's: they must be alike.
  [[nodiscard]] SampleShape sample_shape() const { return readers_.front()->sample_shape(); }
  [[nodiscard]] const ReaderOptions& options() const { return readers_.front()->options(); }
  [[nodiscard]] ReadPath read_path() const { return readers_.front()->read_path(); }
  /// The largest of the shards': a buffer that holds any chunk.
  [[nodiscard]] std::uint64_t chunk_buffer_bytes() const { return chunk_buffer_bytes_; }
  /// Bytes the images occupy in all the shards.
  [[nodiscard]] std::uint64_t stored_bytes() const;

  /// Dataset chunk `chunk` into `out` (at least chunk_buffer_bytes()): DatasetReader's
  /// read_chunk of its shard. Thread-safe.
  void read_chunk(std::uint64_t chunk, std::span<std::uint8_t> out) const;
  /// DatasetReader's view_chunk of its shard.
  [[nodiscard]] storage::SharedBytes view_chunk(std::uint64_t chunk) const;

 private:
  std::vector<std::unique_ptr<DatasetReader>> readers_;
  std::uint64_t chunk_buffer_bytes_ = 0;
};

/// Jpeg-layout shards: sample i of the dataset is an image of one shard.
class JpegShards final : public ShardedDataset {
 public:
  JpegShards(const ShardList& list, JpegReaderOptions options = {}, ShardOpening opening = {});
  ~JpegShards() override;

  [[nodiscard]] FileLayout layout() const override { return FileLayout::jpeg; }
  [[nodiscard]] const JpegDatasetReader& reader(std::size_t shard) const {
    return *readers_.at(shard);
  }
  /// Size of the encoded images of all the shards.
  [[nodiscard]] std::uint64_t total_bytes() const;
  [[nodiscard]] JpegShape shape(std::uint64_t sample) const;
  [[nodiscard]] std::uint64_t sample_size(std::uint64_t sample) const;
  /// JpegDatasetReader's reads of the sample's shard. Thread-safe.
  void sample_bytes(std::uint64_t sample, std::vector<std::uint8_t>& out) const;
  void read_sample(std::uint64_t sample, std::span<std::uint8_t> out) const;
  [[nodiscard]] ImageFormat sample_format(std::uint64_t sample) const;
  /// Every shard stores /jpeg/crc32.
  [[nodiscard]] bool has_checksums() const;
  [[nodiscard]] bool verify_checksum(std::uint64_t sample) const;

 private:
  std::vector<std::unique_ptr<JpegDatasetReader>> readers_;
};

/// The manifest of the schema files `names` (paths relative to `dir`), in that order: each
/// opened and checked by its layout's reader, with its sample count, size and where its
/// metadata lies (the bytes before its first and after its last image; none said when its
/// images are read through HDF5). Throws what a reader finds wrong, naming the file, and
/// FormatError when their layouts differ.
Manifest describe_shards(const std::string& dir, const std::vector<std::string>& names);

}  // namespace gpufeed::formats
