#pragma once
// Writes small schema v1 files with known pixels for the pipeline tests.
#include <cstdint>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset_writer.hpp"
#include "gpufeed/pipeline/pack.hpp"

namespace gpufeed::testing {

/// The byte at offset `b` of sample `i`: a hash, so every sample differs and none is zero.
inline std::uint8_t pixel(std::uint64_t i, std::uint64_t b) {
  std::uint64_t z = i * 0x9E3779B97F4A7C15ull + b * 0xBF58476D1CE4E5B9ull + 1;
  z ^= z >> 29;
  z *= 0x94D049BB133111EBull;
  return static_cast<std::uint8_t>(z >> 56);
}

inline std::int64_t label_of(std::uint64_t i) {
  return static_cast<std::int64_t>(i * 7 % 10);
}

inline void write_dataset(const std::string& path, std::uint64_t n, formats::SampleShape shape,
                          std::uint64_t per_chunk, int gzip_level = 0) {
  formats::WriterOptions o;
  o.samples_per_chunk = per_chunk;
  o.gzip_level = gzip_level;
  formats::DatasetWriter writer(path, n, shape, o);
  const std::uint64_t bytes = shape.bytes();
  pack_images(
      writer,
      [&](std::uint64_t first, std::uint64_t count, std::span<std::uint8_t> out) {
        for (std::uint64_t s = 0; s < count; ++s) {
          for (std::uint64_t b = 0; b < bytes; ++b) out[s * bytes + b] = pixel(first + s, b);
        }
      },
      2);
  std::vector<std::int64_t> labels(n);
  for (std::uint64_t i = 0; i < n; ++i) labels[i] = label_of(i);
  writer.write_labels(labels);
  writer.commit();
}

}  // namespace gpufeed::testing
