#pragma once
// What a DatasetReader knows about its file once it is open, shared by the files that open,
// index and read it.
#include <hdf5.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/sample_shape.hpp"
#include "gpufeed/formats/scratch_pool.hpp"
#include "gpufeed/storage/byte_source.hpp"
#include "hdf5/h5.hpp"

namespace gpufeed::formats::detail {

/// How the images dataset is stored and how the reader splits it into chunks. Built and
/// checked once by inspect_images(): every size in it is within the schema limits, so the
/// products the read paths form from these fields cannot overflow.
struct ImagesLayout {
  std::array<std::uint64_t, 4> dims{};   ///< the dataset's dimensions [N, d1, d2, d3]
  std::array<std::uint64_t, 4> chunk{};  ///< HDF5 chunk dimensions (chunked storage only)
  SampleShape shape;
  std::uint64_t sample_bytes = 0;
  std::uint64_t samples_per_chunk = 0;
  std::uint64_t num_chunks = 0;
  H5D_layout_t storage = H5D_CONTIGUOUS;
  /// Chunk dimensions 1-3 equal the dataset's: each chunk row is one HDF5 chunk.
  bool whole_sample_chunks = false;
  /// Position of deflate in the filter pipeline (bit of a chunk's filter mask); -1: none.
  int deflate_stage = -1;
  /// Every filter is one this module decodes itself (deflate; shuffle of bytes is a no-op).
  bool decodable = true;
  std::uint8_t fill_value = 0;
  std::string compression = "none";

  [[nodiscard]] std::uint64_t chunk_buffer_bytes() const {
    return samples_per_chunk * sample_bytes;
  }
  [[nodiscard]] std::uint64_t hdf5_chunk_bytes() const {
    return chunk[0] * chunk[1] * chunk[2] * chunk[3];
  }
};

/// Reads the images dataset's type, shape, storage and filters; throws FormatError for
/// anything the reader cannot serve. `where` names it in messages ("/images in data.h5").
ImagesLayout inspect_images(hid_t images, const std::string& where, const ReaderOptions& options);

/// Everything read_chunk() needs. Filled in by the constructor and never changed afterwards,
/// so any number of threads may read through it at once; only the direct_chunk and
/// hyperslab paths call HDF5 (which takes its own lock).
struct ReaderState {
  std::string path;                                   ///< the file, as the user named it
  std::string images_name;                            ///< the dataset, as the user named it
  std::shared_ptr<const storage::ByteSource> source;  ///< the file's bytes (before `file`: HDF5's
                                                      ///< driver for objects reads through it)
  h5::Id file;
  h5::Id images;
  std::uint64_t file_bytes = 0;
  std::uint64_t stored_bytes = 0;  ///< what HDF5 says the images occupy in the file
  /// stored_bytes is the sum of /index/chunk_size instead, and the index is not compared with
  /// HDF5's (a file in object storage, where HDF5 would read every node of its chunk index, a
  /// GET each, to tell).
  bool size_from_index = false;
  ImagesLayout layout;
  ReadPath read_path = ReadPath::hyperslab;
  std::uint64_t contiguous_offset = 0;    ///< absolute byte offset of sample 0 (contiguous path)
  std::vector<std::uint64_t> chunk_addr;  ///< absolute byte offset of each chunk (index path)
  std::vector<std::uint64_t> chunk_size;  ///< stored bytes of each chunk (index path)
  /// Buffers for chunks as stored and for HDF5 chunks that split samples, leased by the
  /// reading threads: they live as long as the reader, and one grown past kScratchKeepBytes
  /// by a huge chunk is freed when given back.
  mutable ScratchPool<std::vector<std::uint8_t>> scratch{
      [](std::vector<std::uint8_t>& b) { trim_buffer(b, kScratchKeepBytes); }};
  static constexpr std::size_t kScratchKeepBytes = std::size_t{64} << 20;

  [[nodiscard]] std::uint64_t first_sample(std::uint64_t chunk) const {
    return chunk * layout.samples_per_chunk;
  }
  [[nodiscard]] std::uint64_t sample_count(std::uint64_t chunk) const;
  /// "/images in data.h5"
  [[nodiscard]] std::string where() const;
  /// "chunk 12 of /images in data.h5 (samples 768-831)"
  [[nodiscard]] std::string describe_chunk(std::uint64_t chunk) const;
};

/// True when the file has an /index table the reader may use for these images: the schema's
/// /images, stored as whole-sample chunks with filters this module decodes.
bool chunk_index_applies(const ReaderState& state);
/// Loads /index/chunk_addr and /index/chunk_size into `state` and checks them against the
/// file; throws FormatError when they disagree.
void load_chunk_index(ReaderState& state);

/// Where chunk `chunk` is stored, for the paths that read it without HDF5 (index,
/// contiguous); nullopt for the others.
std::optional<storage::Extent> chunk_extent(const ReaderState& state, std::uint64_t chunk);

/// Reads chunk `chunk` along state.read_path into `out` (at least chunk_buffer_bytes()).
void read_chunk(const ReaderState& state, std::uint64_t chunk, std::span<std::uint8_t> out);
/// The chunk's bytes as the source holds them, where they are stored whole and uncompressed.
storage::SharedBytes view_chunk(const ReaderState& state, std::uint64_t chunk);

}  // namespace gpufeed::formats::detail
