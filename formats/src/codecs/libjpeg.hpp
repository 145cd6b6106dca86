#pragma once
// Private: libjpeg-turbo's libjpeg API, for what TurboJPEG 2.x cannot do: decoding part of an
// image (jpeg_crop_scanline, jpeg_skip_scanlines). libjpeg reports errors by longjmp; they
// come back as the FormatErrors TurboJPEG calls give, with the same policy on warnings.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "gpufeed/formats/image.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "turbojpeg.hpp"

namespace gpufeed::formats::detail {

/// Where a part of an image was decoded: columns from x and rows from y on, of the image at the
/// scale asked for; `width` x `height` pixels of `components` bytes, rows packed.
struct DecodedPart {
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t components = 0;
};

/// One libjpeg decompressor, reused from image to image; not thread-safe.
class LibjpegDecompressor {
 public:
  LibjpegDecompressor();
  ~LibjpegDecompressor();
  LibjpegDecompressor(const LibjpegDecompressor&) = delete;
  LibjpegDecompressor& operator=(const LibjpegDecompressor&) = delete;

  /// Decodes `rect` of the image at `scale` (whose size is `width` x `height`) as RGB, or as
  /// CMYK with `cmyk`, into `out` (grown as needed, never shrunk). libjpeg widens the columns
  /// to whole iMCUs. Rows and columns outside are entropy-decoded (as they must be, and so
  /// damage anywhere is still found) but not transformed, upsampled or converted. Throws
  /// FormatError naming `call` for errors and for warnings that lose image data.
  DecodedPart decode(std::span<const std::uint8_t> bytes, ScalingFactor scale, std::uint32_t width,
                     std::uint32_t height, bool cmyk, const PixelRect& rect,
                     std::vector<std::uint8_t>& out, const TjCall& call);

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::vector<std::uint8_t*> rows_;
};

}  // namespace gpufeed::formats::detail
