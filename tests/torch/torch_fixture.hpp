#pragma once
// Small schema v1 files for the LibTorch tests: known pixels, or an easy two-class problem.
#include <cstdint>
#include <string>

#include "dataset_fixture.hpp"

namespace gpufeed::testing {

/// The hashed pixels of dataset_fixture.hpp.
inline std::uint8_t hashed_pixel(std::uint64_t i, std::uint64_t b) {
  return pixel(i, b);
}

/// Two classes anyone can tell apart: class i % 2, dark (about 70) or bright (about 180)
/// pixels with a little noise.
inline std::uint8_t easy_pixel(std::uint64_t i, std::uint64_t b) {
  const int base = i % 2 == 0 ? 70 : 180;
  return static_cast<std::uint8_t>(base + pixel(i, b) % 32);
}

/// n samples of `shape` (NHWC), labels i % classes.
inline void write_dataset(const std::string& path, std::uint64_t n, formats::SampleShape shape,
                          const PixelFn& pixel_of = pixel, std::int64_t classes = 2,
                          std::uint64_t per_chunk = 16) {
  formats::WriterOptions o;
  o.samples_per_chunk = per_chunk;
  write_dataset_with(
      path, n, shape, o, pixel_of,
      [classes](std::uint64_t i) { return static_cast<std::int64_t>(i) % classes; }, 1);
}

}  // namespace gpufeed::testing
