#pragma once
// JPEG decoding and encoding with libjpeg-turbo (its TurboJPEG API, and its libjpeg API to
// decode part of an image): RGB out of grayscale, YCbCr, RGB, CMYK and YCCK files, baseline or
// progressive, optionally at a reduced DCT scale.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/base/unique_handle.hpp"
#include "gpufeed/formats/image.hpp"

namespace gpufeed::formats {

enum class JpegColorspace { rgb, ycbcr, gray, cmyk, ycck };
/// Chroma subsampling as TurboJPEG names it; `other` for factors it has no name for.
enum class JpegSubsampling { s444, s422, s420, gray, s440, s411, other };

std::string to_string(JpegColorspace colorspace);
std::string to_string(JpegSubsampling subsampling);

/// What a JPEG header declares.
struct JpegInfo {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t components = 0;  ///< 1 (gray), 3 (YCbCr, RGB) or 4 (CMYK, YCCK)
  JpegSubsampling subsampling = JpegSubsampling::other;
  JpegColorspace colorspace = JpegColorspace::ycbcr;
};

/// A DCT scaling factor num/denom: libjpeg-turbo decodes at that scale for about the cost of
/// the smaller image. Sizes round up, as TJSCALED does.
struct ScalingFactor {
  int num = 1;
  int denom = 1;

  [[nodiscard]] std::uint32_t scale(std::uint32_t dimension) const {
    return static_cast<std::uint32_t>((std::uint64_t{dimension} * static_cast<std::uint64_t>(num) +
                                       static_cast<std::uint64_t>(denom) - 1) /
                                      static_cast<std::uint64_t>(denom));
  }
  friend bool operator==(const ScalingFactor&, const ScalingFactor&) = default;
};

/// The factors libjpeg-turbo offers that do not enlarge (num <= denom), largest first:
/// 1/1, 7/8, 3/4, 5/8, 1/2, 3/8, 1/4, 1/8.
const std::vector<ScalingFactor>& reducing_scaling_factors();

/// The smallest reducing factor at which a `width` x `height` image is still at least
/// `target_width` x `target_height`: decode there, then resize down to the target. 1/1 when
/// the target is as large as the image or larger.
ScalingFactor best_scale(std::uint32_t width, std::uint32_t height, std::uint32_t target_width,
                         std::uint32_t target_height);

/// The reducing factor libjpeg-turbo decodes a `width` x `height` image fastest at while it is
/// still at least `target_width` x `target_height`: the smallest of 1/8, 1/4, 1/2 and 1/1 that
/// covers the target. Only those scales have SIMD inverse DCTs; the others (3/8, 5/8, 3/4,
/// 7/8) run scalar ones, which makes 3/8 slower than 1/2 and 5/8-7/8 slower than full size
/// (bench/jpeg/README.md). Never smaller than best_scale(), so quality is never lost.
ScalingFactor fastest_scale(std::uint32_t width, std::uint32_t height, std::uint32_t target_width,
                            std::uint32_t target_height);

/// Part of an image decoded at some scale: `pixels` are its columns from x and rows from y on.
struct DecodedRegion {
  ConstImageView pixels;
  std::uint32_t x = 0;
  std::uint32_t y = 0;
};

namespace detail {
class LibjpegDecompressor;
}

/// Owns a TurboJPEG instance (tjhandle).
struct TjHandleTraits {
  using handle_type = void*;
  static constexpr void* null() noexcept { return nullptr; }
  static void destroy(void* handle) noexcept;
};
using TjHandle = UniqueHandle<TjHandleTraits>;

/// Decodes JPEG images to RGB (3 bytes a pixel). Owns one TurboJPEG decompressor, a libjpeg one
/// for regions (made by the first decode_region) and scratch buffers: make one per worker
/// thread; an instance is not thread-safe.
///
/// Every failure throws FormatError naming the sample ("sample 17 of train.h5"): empty bytes,
/// bytes that are not a JPEG, a damaged or truncated file, a header declaring more than
/// schema::kMaxImagePixels pixels (refused before any pixel memory is allocated). Warnings that
/// lose no image data (extraneous bytes between markers) are accepted, as Pillow does.
class JpegDecoder {
 public:
  /// `source` names where the samples come from in messages, e.g. the file.
  explicit JpegDecoder(std::string source = {});
  ~JpegDecoder();
  JpegDecoder(JpegDecoder&&) noexcept;
  JpegDecoder& operator=(JpegDecoder&&) noexcept;

  void set_source(std::string source) { source_ = std::move(source); }
  [[nodiscard]] const std::string& source() const { return source_; }

  /// Reads the header of sample `sample` and checks its size against the pixel limit.
  JpegInfo header(std::span<const std::uint8_t> bytes, std::uint64_t sample);

  /// Decodes at `scale` into `out` (RGB, 3 channels) of exactly scale.scale(info.width) x
  /// scale.scale(info.height); `info` is this sample's header(). Rows go `out.stride` apart,
  /// so `out` may be a sample's place in a batch.
  void decode(std::span<const std::uint8_t> bytes, const JpegInfo& info, ScalingFactor scale,
              const ImageView& out, std::uint64_t sample);

  /// header(), then decode() into a new image.
  Image decode(std::span<const std::uint8_t> bytes, std::uint64_t sample, ScalingFactor scale = {});

  /// Decodes only `region` of the image at `scale` (in pixels of the scaled image, inside it,
  /// not empty): its pixels equal those decode() gives there. The result may extend past the
  /// region (libjpeg decodes whole iMCU columns) and points into this decoder's buffer, valid
  /// until its next decode. The whole file is still entropy-decoded, so damage outside the
  /// region is refused as decode() refuses it; what is saved is the inverse DCT, upsampling
  /// and color conversion of the rest (libjpeg-turbo's jpeg_crop_scanline and
  /// jpeg_skip_scanlines; TurboJPEG 2.x has no region decode).
  DecodedRegion decode_region(std::span<const std::uint8_t> bytes, const JpegInfo& info,
                              ScalingFactor scale, const PixelRect& region, std::uint64_t sample);

 private:
  void decode_cmyk(std::span<const std::uint8_t> bytes, const ImageView& out, std::uint64_t sample);

  TjHandle handle_;
  std::string source_;
  std::vector<std::uint8_t> cmyk_;
  std::unique_ptr<detail::LibjpegDecompressor> libjpeg_;  // made by the first decode_region
  std::vector<std::uint8_t> region_;
};

/// Encodes images as JPEG: 1 channel as grayscale, 3 as RGB (stored as YCbCr), 4 as CMYK
/// (stored as YCCK). Owns one TurboJPEG compressor; not thread-safe.
class JpegEncoder {
 public:
  /// `quality` 1-100. Grayscale input ignores `subsampling`.
  explicit JpegEncoder(int quality = 90, JpegSubsampling subsampling = JpegSubsampling::s420,
                       bool progressive = false);

  [[nodiscard]] std::vector<std::uint8_t> encode(const ConstImageView& image);

 private:
  TjHandle handle_;
  int quality_;
  JpegSubsampling subsampling_;
  bool progressive_;
};

}  // namespace gpufeed::formats
