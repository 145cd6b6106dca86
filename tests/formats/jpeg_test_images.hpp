#pragma once
// Images and JPEG files the JPEG tests generate: photo-like pixels, encoded bytes, headers
// patched into bad input, and jpeg-layout files written with the raw HDF5 API.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpufeed/formats/image.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"

namespace gpufeed::testing {

/// Deterministic photo-like pixels: smooth colour gradients, discs with sharp edges and fine
/// texture, the same for the same seed. 1 channel is its luminance.
formats::Image photo_like(std::uint32_t width, std::uint32_t height, std::uint32_t channels,
                          std::uint32_t seed);

std::vector<std::uint8_t> encode_jpeg(
    const formats::Image& image, int quality = 92,
    formats::JpegSubsampling subsampling = formats::JpegSubsampling::s444,
    bool progressive = false);

/// Peak signal-to-noise ratio of two images of the same shape, in dB.
double psnr(const formats::Image& a, const formats::Image& b);

/// Largest and mean absolute difference of two images of the same shape.
struct PixelDifference {
  int max = 0;
  double mean = 0;
};
PixelDifference difference(const formats::Image& a, const formats::Image& b);

/// Position of the first marker FF `marker` in `bytes` (throws when absent).
std::size_t find_marker(const std::vector<std::uint8_t>& bytes, std::uint8_t marker);

/// `bytes` with the frame header (SOF0) patched to declare `width` x `height`.
std::vector<std::uint8_t> with_declared_size(std::vector<std::uint8_t> bytes, std::uint16_t width,
                                             std::uint16_t height);

/// The arrays of a jpeg-layout file, written as given (so they may be inconsistent).
struct JpegLayoutArrays {
  std::vector<std::uint8_t> bytes;
  std::vector<std::int64_t> offsets;
  std::vector<std::int64_t> shapes;  ///< flat [N, 3]
  std::vector<std::int64_t> labels;
  std::vector<hsize_t> chunk;  ///< empty: /jpeg/bytes contiguous
  hsize_t user_block = 0;
};
void write_jpeg_layout(const std::string& path, const JpegLayoutArrays& arrays);

/// The arrays of a consistent jpeg-layout file holding `samples` (encoded images) back to
/// back: shapes 8x8x3, labels 0, 1, 2, ...
JpegLayoutArrays jpeg_layout_of(const std::vector<std::vector<std::uint8_t>>& samples);

}  // namespace gpufeed::testing
