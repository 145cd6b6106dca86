#pragma once
// Writes small schema v1 files with known pixels and labels for the tests.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/dataset_writer.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/pack.hpp"

namespace gpufeed::testing {

/// Every sample of a raw-layout file, in order, read chunk by chunk.
inline std::vector<std::uint8_t> read_all(const formats::DatasetReader& reader) {
  const std::uint64_t sample_bytes = reader.sample_shape().bytes();
  std::vector<std::uint8_t> all;
  std::vector<std::uint8_t> buffer(reader.chunk_buffer_bytes());
  for (std::uint64_t chunk = 0; chunk < reader.num_chunks(); ++chunk) {
    reader.read_chunk(chunk, buffer);
    const std::uint64_t bytes = reader.chunk_sample_count(chunk) * sample_bytes;
    all.insert(all.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(bytes));
  }
  return all;
}

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

using PixelFn = std::function<std::uint8_t(std::uint64_t sample, std::uint64_t byte)>;
using LabelFn = std::function<std::int64_t(std::uint64_t sample)>;

/// n samples of `shape` (NHWC) with the given pixels and labels, packed on `threads` threads.
inline void write_dataset_with(const std::string& path, std::uint64_t n, formats::SampleShape shape,
                               const formats::WriterOptions& options, const PixelFn& pixel_of,
                               const LabelFn& label, unsigned threads) {
  formats::DatasetWriter writer(path, n, shape, options);
  const std::uint64_t bytes = shape.bytes();
  formats::pack_images(
      writer,
      [&](std::uint64_t first, std::uint64_t count, std::span<std::uint8_t> out) {
        for (std::uint64_t s = 0; s < count; ++s) {
          for (std::uint64_t b = 0; b < bytes; ++b) out[s * bytes + b] = pixel_of(first + s, b);
        }
      },
      threads);
  std::vector<std::int64_t> labels(n);
  for (std::uint64_t i = 0; i < n; ++i) labels[i] = label(i);
  writer.write_labels(labels);
  writer.commit();
}

/// pixel() and label_of() in chunks of `per_chunk`, deflated at `gzip_level` (0: none).
inline void write_dataset(const std::string& path, std::uint64_t n, formats::SampleShape shape,
                          std::uint64_t per_chunk, int gzip_level = 0) {
  formats::WriterOptions o;
  o.samples_per_chunk = per_chunk;
  o.gzip_level = gzip_level;
  write_dataset_with(path, n, shape, o, pixel, label_of, 2);
}

/// An image of a jpeg-layout file as the writer takes it.
struct StoredImage {
  std::vector<std::uint8_t> bytes;
  std::uint16_t channels = 3;
  std::int64_t label = 0;
};

using ImageFn =
    std::function<StoredImage(std::uint64_t i, std::uint32_t width, std::uint32_t height)>;

/// A jpeg-layout file of `n` images of mixed sizes: image i is 40 + 16 * (i % 5) pixels wide
/// and 32 + 16 * (i % heights) high, as `image` encodes it.
inline void write_jpeg_dataset(const std::string& path, std::uint64_t n, std::uint32_t heights,
                               const ImageFn& image) {
  formats::JpegDatasetWriter writer(path);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint32_t w = 40 + static_cast<std::uint32_t>(i % 5) * 16;
    const std::uint32_t h = 32 + static_cast<std::uint32_t>(i % heights) * 16;
    const StoredImage stored = image(i, w, h);
    writer.append(stored.bytes,
                  {static_cast<std::uint16_t>(h), static_cast<std::uint16_t>(w), stored.channels},
                  stored.label);
  }
  writer.commit();
}

}  // namespace gpufeed::testing
