#pragma once
// Schema v1 jpeg-layout files: every encoded image back to back in /jpeg/bytes (contiguous,
// unfiltered), sample i at bytes[offsets[i]:offsets[i+1]], its shape before decoding, label and
// CRC-32.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/image_format.hpp"

namespace gpufeed::formats {

/// An image's shape before decoding, as /jpeg/shapes stores it.
struct JpegShape {
  std::uint16_t height = 0;
  std::uint16_t width = 0;
  std::uint16_t channels = 0;  ///< 1 (gray), 3 (color) or 4 (CMYK)
  friend bool operator==(const JpegShape&, const JpegShape&) = default;
};

struct JpegWriterOptions {
  /// Appended bytes are gathered up to this much before they go to the staging file.
  std::uint64_t staging_bytes = 8ull << 20;
  /// Block size of the copy from the staging file into /jpeg/bytes at commit.
  std::uint64_t copy_block_bytes = 64ull << 20;
};

/// Writes a jpeg-layout file atomically: samples go to an unlinked staging file beside the
/// destination (memory stays bounded whatever the dataset's size), and commit() writes the
/// HDF5 file under a temporary name, copies the bytes into one contiguous /jpeg/bytes, writes
/// offsets, shapes, CRC-32s, labels and /meta, the schema attribute last, and renames it into
/// place. A writer destroyed without commit() leaves no file. One thread calls it.
class JpegDatasetWriter {
 public:
  explicit JpegDatasetWriter(std::string path, JpegWriterOptions options = {});
  ~JpegDatasetWriter();
  JpegDatasetWriter(const JpegDatasetWriter&) = delete;
  JpegDatasetWriter& operator=(const JpegDatasetWriter&) = delete;

  [[nodiscard]] const std::string& path() const;
  [[nodiscard]] const std::string& temporary_path() const;
  [[nodiscard]] std::uint64_t num_samples() const;
  [[nodiscard]] std::uint64_t total_bytes() const;

  /// Appends one encoded image as sample num_samples(); returns its index. Throws
  /// FormatError for empty bytes or a sample over schema::kMaxSampleBytes.
  std::uint64_t append(std::span<const std::uint8_t> bytes, JpegShape shape, std::int64_t label);
  /// Stored as /meta/class_names at commit.
  void set_class_names(std::vector<std::string> names);
  /// Stored as /meta/source_index at commit: each sample's position in its source.
  void set_source_index(std::vector<std::uint64_t> index);
  /// Stored as /meta/mean and /meta/std at commit (of the decoded RGB pixels, 0-255 scale).
  void set_channel_stats(ChannelStats stats);
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The bytes of the jpeg layout's block: the images chunk order reads together (one GET of a
/// file in object storage). A few MiB: requests stay under object stores' per-prefix rate
/// limits, and the chunk order's window of blocks stays within the read-ahead budget.
inline constexpr std::uint64_t kJpegBlockBytes = std::uint64_t{4} << 20;

struct JpegReaderOptions {
  std::string labels = "/labels";  ///< empty: the file has no labels (every label is -1)
};

/// How JpegDatasetReader fetches a sample's bytes.
enum class JpegReadPath {
  contiguous,  ///< H5Dget_offset + pread: no HDF5 call, no lock
  hyperslab,   ///< H5Dread (chunked or compact /jpeg/bytes in a user's file): serialized by HDF5
};

/// A jpeg-layout file opened for reading. Everything is validated at construction (offsets:
/// N+1 entries from 0, never decreasing, ending at the size of /jpeg/bytes; shapes [N, 3];
/// labels); a bad file throws FormatError naming the file, dataset, sample and what to do.
/// Afterwards the reader is immutable and its reads may run on any number of threads; on the
/// contiguous path a read is one pread, with no HDF5 call.
class JpegDatasetReader final : public Dataset {
 public:
  explicit JpegDatasetReader(const std::string& path, JpegReaderOptions options = {});
  ~JpegDatasetReader() override;
  JpegDatasetReader(JpegDatasetReader&&) noexcept;
  JpegDatasetReader& operator=(JpegDatasetReader&&) noexcept;

  [[nodiscard]] FileLayout layout() const override { return FileLayout::jpeg; }
  [[nodiscard]] const std::string& path() const override;
  [[nodiscard]] std::uint64_t num_samples() const override;
  /// Images of a block: consecutive images of about kJpegBlockBytes together (at least 1), the
  /// unit chunk order shuffles and a file in object storage fetches in one GET.
  [[nodiscard]] std::uint64_t samples_per_chunk() const override;
  /// Blocks in the file.
  [[nodiscard]] std::uint64_t num_chunks() const override;
  /// "jpeg": encoded images (JPEG, PNG or WebP).
  [[nodiscard]] std::string compression() const override { return "jpeg"; }
  /// "jpeg contiguous (pread)" or "jpeg hyperslab".
  [[nodiscard]] std::string read_path_name() const override;
  /// Size of /jpeg/bytes.
  [[nodiscard]] std::uint64_t total_bytes() const;
  [[nodiscard]] JpegReadPath read_path() const;
  [[nodiscard]] const std::vector<std::uint64_t>& offsets() const;
  [[nodiscard]] JpegShape shape(std::uint64_t sample) const;
  [[nodiscard]] std::uint64_t sample_size(std::uint64_t sample) const;
  [[nodiscard]] bool remote() const override;
  [[nodiscard]] storage::ObjectStoreStats network() const override;
  /// Blocks (units) are planned on the contiguous path (the hyperslab path reads through
  /// HDF5): each block's bytes as one range.
  [[nodiscard]] std::vector<storage::Extent> unit_extents(
      std::span<const std::uint64_t> blocks) const override;
  /// Each image's own range (random order: a block fetched for one image would waste it).
  [[nodiscard]] std::vector<storage::Extent> sample_extents(
      std::span<const std::uint64_t> samples) const override;
  [[nodiscard]] std::shared_ptr<const storage::ByteSource> byte_source() const override;

  /// Reads sample `sample`'s encoded bytes into `out` (resized to fit). Thread-safe. Throws
  /// FormatError for an empty sample or a read past the end of the file.
  void sample_bytes(std::uint64_t sample, std::vector<std::uint8_t>& out) const;
  /// The same into `out`, which must be exactly sample_size(sample) bytes.
  void read_sample(std::uint64_t sample, std::span<std::uint8_t> out) const;
  /// What the sample's first bytes say it is (one small read). Thread-safe. Throws FormatError
  /// for an empty sample.
  [[nodiscard]] ImageFormat sample_format(std::uint64_t sample) const;

  /// The file stores /jpeg/crc32.
  [[nodiscard]] bool has_checksums() const;
  /// Reads the sample and compares its CRC-32 with the stored one. Thread-safe. Throws
  /// FormatError when the file has no checksums.
  [[nodiscard]] bool verify_checksum(std::uint64_t sample) const;
  /// Compares `bytes` (the sample as read) with the stored CRC-32.
  [[nodiscard]] bool verify_checksum(std::uint64_t sample,
                                     std::span<const std::uint8_t> bytes) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpufeed::formats
