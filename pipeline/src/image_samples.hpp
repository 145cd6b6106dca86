#pragma once
// Decodes the encoded layout's samples (JPEG, PNG, WebP) straight into their place in a batch
// slot.
#include <cstdint>

#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/resize.hpp"
#include "gpufeed/pipeline/augment.hpp"

namespace gpufeed::detail {

/// Time one decode spent reading bytes and decoding + resizing, for the stage counters.
struct DecodeTiming {
  std::int64_t read_ns = 0;
  std::int64_t decode_ns = 0;
};

/// Reads a sample's bytes (pread, no HDF5 call) and decodes it by what its bytes are. A JPEG is
/// decoded with libjpeg-turbo at the fastest DCT scale that still covers the output
/// (formats::fastest_scale), only the part the crop (augment) and the resize filter need; a
/// PNG or WebP is decoded whole. Either is then cropped and resized into the slot and flipped,
/// with the same crop and flip for every format. Each worker thread has its own decoders,
/// resizer and scratch (thread_local), so decode() is thread-safe and allocates nothing in
/// steady state once the largest image has been seen. Throws FormatError naming the file and
/// sample when the sample cannot be decoded (or is of a format gpufeed does not decode).
class ImageSamples {
 public:
  ImageSamples(const formats::JpegDatasetReader& reader, std::uint32_t height, std::uint32_t width,
               Augment augment, formats::ResizeFilter filter, std::uint64_t seed);

  /// Decodes `sample` of `epoch` into `out` (height x width x 3, HWC, densely packed).
  DecodeTiming decode(std::uint64_t sample, std::uint64_t epoch, std::uint8_t* out) const;

 private:
  const formats::JpegDatasetReader& reader_;
  const std::uint32_t height_;
  const std::uint32_t width_;
  const Augment augment_;
  const formats::ResizeFilter filter_;
  const std::uint64_t seed_;
};

/// Mirrors `count` images of `height` x `width` x `channels` (HWC or, with `planar`, CHW)
/// left-right in place.
void flip_horizontal(std::uint8_t* pixels, std::uint32_t height, std::uint32_t width,
                     std::uint32_t channels, bool planar);

}  // namespace gpufeed::detail
