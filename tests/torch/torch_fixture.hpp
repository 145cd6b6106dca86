#pragma once
// Small schema v1 files for the LibTorch tests: known pixels, or an easy two-class problem.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset_writer.hpp"
#include "gpufeed/pipeline/pack.hpp"

namespace gpufeed::testing {

/// The byte at offset `b` of sample `i`: a hash, so every sample differs.
inline std::uint8_t hashed_pixel(std::uint64_t i, std::uint64_t b) {
  std::uint64_t z = i * 0x9E3779B97F4A7C15ull + b * 0xBF58476D1CE4E5B9ull + 1;
  z ^= z >> 29;
  z *= 0x94D049BB133111EBull;
  return static_cast<std::uint8_t>(z >> 56);
}

/// Two classes anyone can tell apart: class i % 2, dark (about 70) or bright (about 180)
/// pixels with a little noise.
inline std::uint8_t easy_pixel(std::uint64_t i, std::uint64_t b) {
  const int base = i % 2 == 0 ? 70 : 180;
  return static_cast<std::uint8_t>(base + hashed_pixel(i, b) % 32);
}

using PixelFn = std::function<std::uint8_t(std::uint64_t sample, std::uint64_t byte)>;

/// n samples of `shape` (NHWC), labels i % classes.
inline void write_dataset(const std::string& path, std::uint64_t n, formats::SampleShape shape,
                          const PixelFn& pixel = hashed_pixel, std::int64_t classes = 2,
                          std::uint64_t per_chunk = 16) {
  formats::WriterOptions o;
  o.samples_per_chunk = per_chunk;
  formats::DatasetWriter writer(path, n, shape, o);
  const std::uint64_t bytes = shape.bytes();
  pack_images(
      writer,
      [&](std::uint64_t first, std::uint64_t count, std::span<std::uint8_t> out) {
        for (std::uint64_t s = 0; s < count; ++s) {
          for (std::uint64_t b = 0; b < bytes; ++b) out[s * bytes + b] = pixel(first + s, b);
        }
      },
      1);
  std::vector<std::int64_t> labels(n);
  for (std::uint64_t i = 0; i < n; ++i) labels[i] = static_cast<std::int64_t>(i) % classes;
  writer.write_labels(labels);
  writer.commit();
}

}  // namespace gpufeed::testing
