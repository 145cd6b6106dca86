#pragma once
// Writes a schema v1 file from any sample source: DatasetWriter + pack_images + labels,
// class names and commit. The file appears at its path complete, or not at all.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset_writer.hpp"
#include "gpufeed/formats/pack.hpp"

namespace gpufeed::formats {

/// A dataset to pack: its size and shape, a thread-safe source of pixels, and its labels.
struct PackInput {
  std::uint64_t samples = 0;
  SampleShape shape;
  SampleSource source;
  std::vector<std::int64_t> labels;      ///< one per sample
  std::vector<std::string> class_names;  ///< may be empty
  /// Each sample's position in the source (stored_order()); empty: the source's own order.
  std::vector<std::uint64_t> source_index;
  std::string description;                 ///< "synthetic 20000:64x64x3 (seed 0)", "x.npy"
  std::shared_ptr<const void> keep_alive;  ///< whatever `source` reads from (a mapped file)
};

struct PackSettings {
  WriterOptions writer;
  unsigned threads = 0;  ///< 0: all cores
};

struct PackResult {
  std::uint64_t samples = 0;
  SampleShape shape;
  std::uint64_t samples_per_chunk = 0;
  std::uint64_t chunks = 0;
  std::uint64_t raw_bytes = 0;   ///< samples * sample bytes
  std::uint64_t file_bytes = 0;  ///< size of the finished file
  double seconds = 0;
};

/// The order writers store samples in unless told to keep the source's: a permutation of
/// [0, n) drawn from `seed` (Fisher-Yates over formats::SampleRandom), the same on every
/// platform. Stored shuffled, a file read in chunk order gives batches as mixed as a random
/// order's, whatever order its source had (class-sorted folders, label-sorted arrays).
std::vector<std::uint64_t> stored_order(std::uint64_t n, std::uint64_t seed);

/// `input` read in `order` (order[i]: the source sample stored at position i): its source,
/// labels and source_index follow.
PackInput in_order(PackInput input, std::vector<std::uint64_t> order);

/// Packs `input` into `path`. Throws what the writer and the source throw; on any failure the
/// destination is left untouched and no temporary file remains.
PackResult pack_file(const std::string& path, const PackInput& input, const PackSettings& settings,
                     const PackProgress& progress = {});

}  // namespace gpufeed::formats
