#pragma once
// The RGB test picture the jpeg-layout tests encode: smooth, so JPEG keeps it well, and
// different per sample.
#include <cstddef>
#include <cstdint>

#include "gpufeed/formats/image.hpp"

namespace gpufeed::testing {

/// A smooth, sample-specific RGB picture of `w` x `h`.
inline formats::Image smooth_picture(std::uint64_t i, std::uint32_t w, std::uint32_t h) {
  formats::Image img(w, h, 3);
  for (std::uint32_t y = 0; y < h; ++y) {
    for (std::uint32_t x = 0; x < w; ++x) {
      std::uint8_t* p = img.pixels.data() + (std::size_t{y} * w + x) * 3;
      p[0] = static_cast<std::uint8_t>((x * 255) / w);
      p[1] = static_cast<std::uint8_t>((y * 255) / h);
      p[2] = static_cast<std::uint8_t>((i * 37) % 256);
    }
  }
  return img;
}

}  // namespace gpufeed::testing
