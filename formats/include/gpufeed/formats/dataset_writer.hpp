#pragma once
// Writes schema v1 raw-layout files: chunked uint8 images, labels, statistics, chunk index.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/formats/sample_shape.hpp"

namespace gpufeed::formats {

struct WriterOptions {
  /// Samples per chunk; 0 picks about schema::kTargetChunkBytes per chunk.
  std::uint64_t samples_per_chunk = 0;
  /// 0: store chunks uncompressed; 1-9: deflate ("gzip") at that level.
  int gzip_level = 0;
};

/// The samples a chunk holds in a file of more samples: `asked`, or with 0 about
/// schema::kTargetChunkBytes of samples of `sample_bytes`. (A file of fewer samples holds them
/// in one chunk.)
[[nodiscard]] std::uint64_t samples_per_chunk_for(std::uint64_t asked, std::uint64_t sample_bytes);

/// A chunk ready for the file: its bytes as stored (compressed or not) and the per-channel
/// sums of its pixels, for the dataset's mean and std.
struct EncodedChunk {
  std::uint64_t index = 0;
  std::vector<std::uint8_t> bytes;
  std::vector<double> channel_sum;
  std::vector<double> channel_sum_sq;
};

/// Writes a schema v1 raw-layout file atomically: everything goes to a temporary file beside
/// the destination, which is renamed into place by commit(). A writer destroyed without
/// commit() (an error, an interrupted run) removes the temporary file, so a file at the
/// destination path is always complete. The root attribute `gpufeed.schema` is written last.
///
/// Threads: encode() is const and may run on many threads at once (that is where the
/// compression work is); every other call comes from one thread. formats::pack_images() in the
/// pipeline module drives both in parallel.
class DatasetWriter {
 public:
  /// `shape.layout` must be NHWC. Creates the temporary file and the datasets.
  DatasetWriter(std::string path, std::uint64_t num_samples, SampleShape shape,
                WriterOptions options = {});
  ~DatasetWriter();
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  [[nodiscard]] const std::string& path() const;
  [[nodiscard]] const std::string& temporary_path() const;
  [[nodiscard]] std::uint64_t num_samples() const;
  [[nodiscard]] SampleShape sample_shape() const;
  [[nodiscard]] std::uint64_t samples_per_chunk() const;
  [[nodiscard]] std::uint64_t num_chunks() const;
  /// Samples in chunk `index` (fewer in the last one).
  [[nodiscard]] std::uint64_t chunk_sample_count(std::uint64_t index) const;

  /// Compresses the samples of chunk `index` (chunk_sample_count(index) samples, NHWC) and
  /// sums their pixels per channel. Thread-safe.
  [[nodiscard]] EncodedChunk encode(std::uint64_t index, std::span<const std::uint8_t> raw) const;
  /// Writes an encoded chunk with H5Dwrite_chunk. Chunks may come in any order; each once.
  void write(const EncodedChunk& chunk);
  void write_labels(std::span<const std::int64_t> labels);
  void write_class_names(const std::vector<std::string>& names);
  /// /meta/source_index: each sample's position in the source it was packed from.
  void write_source_index(std::span<const std::uint64_t> index);
  /// Checks every chunk was written, writes /index, /meta/mean, /meta/std and the schema
  /// attributes, closes the file and renames it into place.
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpufeed::formats
