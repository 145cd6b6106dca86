#pragma once
// Decodes the encoded layout's samples (JPEG, PNG, WebP) straight into their place in a batch
// slot.
#include <cstdint>
#include <vector>

#include "gpufeed/formats/image.hpp"
#include "gpufeed/formats/image_codec.hpp"
#include "gpufeed/formats/resize.hpp"
#include "gpufeed/formats/scratch_pool.hpp"
#include "gpufeed/formats/shards.hpp"
#include "gpufeed/pipeline/augment.hpp"
#include "gpufeed/pipeline/geometry.hpp"

namespace gpufeed::pipeline::detail {

/// Time one decode spent reading bytes and decoding + resizing, for the stage counters.
struct DecodeTiming {
  std::int64_t read_ns = 0;
  std::int64_t decode_ns = 0;
};

/// What one decode works with: the decoders (TurboJPEG and libjpeg state, the decoded region),
/// the resizer's taps, the encoded bytes and a whole decoded PNG or WebP.
struct DecodeScratch {
  formats::ImageDecoder decoder;
  formats::Resizer resizer;
  std::vector<std::uint8_t> bytes;
  formats::Image whole;
};

/// Reads a sample's bytes (pread, no HDF5 call) and decodes it by what its bytes are. A JPEG is
/// decoded with libjpeg-turbo at the fastest DCT scale that still covers the output
/// (formats::fastest_scale), only the part the crop (augment) and the resize filter need; a
/// PNG or WebP is decoded whole. Either is then cropped and resized into the slot and flipped,
/// with the same crop and flip for every format. A decode leases a DecodeScratch from this
/// object's pool (one per concurrent decode), so decode() is thread-safe, allocates nothing in
/// steady state once the largest image has been seen, and the scratch dies with the loader; a
/// buffer grown past kScratchKeepBytes by a huge image is freed when given back. Throws
/// FormatError naming the file and sample when the sample cannot be decoded (or is of a format
/// gpufeed does not decode).
class ImageSamples {
 public:
  /// `geometry` (LoaderOptions' resolved one, loader_geometry()) replaces `augment` when it is
  /// active.
  ImageSamples(const formats::JpegShards& reader, std::uint32_t height, std::uint32_t width,
               Augment augment, const Geometry& geometry, formats::ResizeFilter filter,
               std::uint64_t seed);

  /// Decodes `sample` of `epoch` into `out` (height x width x 3, HWC, densely packed).
  DecodeTiming decode(std::uint64_t sample, std::uint64_t epoch, std::uint8_t* out) const;

  /// Where `sample` of `epoch`, a `width` x `height` image, lands in its output: the geometry's
  /// placement, or the augment's crop resized to the whole output and its flip. The same draw
  /// decode() makes; what the GPU path renders. Throws FormatError naming the sample when the
  /// image cannot take the crop.
  [[nodiscard]] Placement placement(std::uint64_t sample, std::uint64_t epoch, std::uint32_t width,
                                    std::uint32_t height) const;
  [[nodiscard]] std::uint32_t height() const { return height_; }
  [[nodiscard]] std::uint32_t width() const { return width_; }
  [[nodiscard]] formats::ResizeFilter filter() const { return filter_; }

  /// Scratch objects made so far: the most decodes that ran at once.
  [[nodiscard]] std::size_t scratch_count() const { return scratch_.made(); }

  static constexpr std::size_t kScratchKeepBytes = std::size_t{64} << 20;

 private:
  /// The geometry path: the sample's Placement, decoded and rendered into `out`.
  void decode_placed(std::uint64_t sample, std::uint64_t epoch, const formats::ImageInfo& info,
                     DecodeScratch& s, std::uint8_t* out) const;

  const formats::JpegShards& reader_;
  const std::uint32_t height_;
  const std::uint32_t width_;
  const Augment augment_;
  const Geometry geometry_;
  const formats::ResizeFilter filter_;
  const std::uint64_t seed_;
  mutable formats::detail::ScratchPool<DecodeScratch> scratch_{[](DecodeScratch& s) {
    formats::detail::trim_buffer(s.bytes, kScratchKeepBytes);
    formats::detail::trim_buffer(s.whole.pixels, kScratchKeepBytes);
  }};
};

/// Mirrors `count` images of `height` x `width` x `channels` (HWC or, with `planar`, CHW)
/// left-right in place.
void flip_horizontal(std::uint8_t* pixels, std::uint32_t height, std::uint32_t width,
                     std::uint32_t channels, bool planar);

}  // namespace gpufeed::pipeline::detail
