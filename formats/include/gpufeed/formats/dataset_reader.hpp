#pragma once
// Reads uint8 image datasets (schema v1 raw layout, or a user's own file) chunk by chunk.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset.hpp"
#include "gpufeed/formats/sample_shape.hpp"
#include "gpufeed/storage/byte_source.hpp"

namespace gpufeed::formats {

/// How DatasetReader fetches the bytes of a chunk.
enum class ReadPath {
  index,         ///< /index chunk table + pread + own decompression: no HDF5 call, no lock
  direct_chunk,  ///< H5Dread_chunk under HDF5's lock, decompression outside it
  contiguous,    ///< H5Dget_offset + pread: no HDF5 call, no lock
  hyperslab,     ///< H5Dread (filters we cannot decode ourselves): serialized by HDF5
};
inline constexpr std::array<const char*, 4> kReadPathNames{"index", "direct_chunk", "contiguous",
                                                           "hyperslab"};
std::string to_string(ReadPath path);

struct ReaderOptions {
  std::string images = "/images";
  std::string labels = "/labels";  ///< empty: the file has no labels (every label is -1)
  /// Pixel order of `images`; unset: the file's `gpufeed.layout`-independent default, NHWC.
  std::optional<Layout> layout;
  /// Use the /index chunk table when the file has a valid one. Off forces direct_chunk.
  bool use_index = true;
  /// For contiguous datasets: samples per virtual chunk are chosen to make chunks about this big.
  std::uint64_t contiguous_chunk_bytes = 1ull << 20;
};

/// A uint8 image dataset opened for reading. The dataset is split into "chunks": runs of
/// consecutive samples that are stored (and so best read) together: an HDF5 chunk row along the
/// sample dimension, or a virtual chunk of a contiguous dataset.
///
/// Everything is validated at construction; a bad file throws FormatError naming the file,
/// dataset and what to do. After construction the reader is immutable and read_chunk() may be
/// called from any number of threads at once; on the index and contiguous paths it makes no
/// HDF5 call and takes no lock.
class DatasetReader final : public Dataset {
 public:
  explicit DatasetReader(const std::string& path, ReaderOptions options = {});
  ~DatasetReader() override;
  DatasetReader(DatasetReader&&) noexcept;
  DatasetReader& operator=(DatasetReader&&) noexcept;

  [[nodiscard]] FileLayout layout() const override { return FileLayout::raw; }
  [[nodiscard]] const std::string& path() const override;
  [[nodiscard]] const ReaderOptions& options() const;
  [[nodiscard]] std::uint64_t num_samples() const override;
  [[nodiscard]] SampleShape sample_shape() const;
  [[nodiscard]] std::uint64_t samples_per_chunk() const override;
  [[nodiscard]] std::uint64_t num_chunks() const override;
  /// Bytes a read_chunk() destination must hold: samples_per_chunk() * sample bytes.
  [[nodiscard]] std::uint64_t chunk_buffer_bytes() const;
  /// The first sample of `chunk` and how many samples it holds (fewer in the last chunk).
  [[nodiscard]] std::uint64_t chunk_first_sample(std::uint64_t chunk) const;
  [[nodiscard]] std::uint64_t chunk_sample_count(std::uint64_t chunk) const;
  [[nodiscard]] ReadPath read_path() const;
  /// to_string(read_path()).
  [[nodiscard]] std::string read_path_name() const override;
  /// "none", "gzip", "shuffle+gzip", ... as stored in the file.
  [[nodiscard]] std::string compression() const override;
  /// Bytes the images occupy in the file (compressed size).
  [[nodiscard]] std::uint64_t stored_bytes() const;
  [[nodiscard]] bool remote() const override;
  [[nodiscard]] storage::ObjectStoreStats network() const override;
  /// Chunks are planned on the index and contiguous paths (the others read through HDF5).
  [[nodiscard]] std::vector<storage::Extent> unit_extents(
      std::span<const std::uint64_t> chunks) const override;
  [[nodiscard]] std::shared_ptr<const storage::ByteSource> byte_source() const override;

  /// Reads chunk `chunk` into `out` (at least chunk_buffer_bytes()): its samples densely, in
  /// the file's layout. Thread-safe. Throws FormatError for a damaged chunk.
  void read_chunk(std::uint64_t chunk, std::span<std::uint8_t> out) const;
  /// Chunk `chunk`'s bytes (chunk_buffer_bytes() of them) without a copy, where the file's
  /// source holds them already: a chunk stored whole and uncompressed (the index and contiguous
  /// paths) that a planned GET of an object fetched. Else an empty SharedBytes: read_chunk() it.
  /// Thread-safe; throws as read_chunk() does.
  [[nodiscard]] storage::SharedBytes view_chunk(std::uint64_t chunk) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpufeed::formats
