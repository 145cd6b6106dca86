#pragma once
// Decoding encoded images of any format gpufeed reads (JPEG, PNG, WebP), told apart by their
// bytes, to 8-bit RGB with Pillow's Image.convert("RGB") conventions: alpha dropped (not
// composited), 16-bit samples scaled to 8 bits (the high byte), palettes and grayscale
// expanded, no EXIF rotation.
#include <cstdint>
#include <span>
#include <string>

#include "gpufeed/formats/image.hpp"
#include "gpufeed/formats/image_format.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"

namespace gpufeed::formats {

/// What an image's header declares.
struct ImageInfo {
  ImageFormat format = ImageFormat::unknown;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  /// As stored: 1 gray, 2 gray + alpha, 3 color, 4 color + alpha (JPEG: CMYK/YCCK).
  std::uint32_t channels = 0;
  std::uint32_t bit_depth = 8;  ///< bits per sample (PNG: 1, 2, 4, 8 or 16)
  bool palette = false;         ///< PNG: indexed color
  bool interlaced = false;      ///< PNG: Adam7
  bool lossless = false;        ///< WebP: VP8L
  bool animated = false;        ///< WebP: an animation (its first frame is decoded)
  JpegInfo jpeg;                ///< JPEG: its header, for the DCT-scaled paths
};

/// What a decoder's errors name: the file (or URL) its images come from.
class NamedSource {
 public:
  explicit NamedSource(std::string source = {}) : source_(std::move(source)) {}
  void set_source(std::string source) { source_ = std::move(source); }

 protected:
  std::string source_;
};

/// PNG files with libspng: every color type and bit depth, interlaced or not, CRCs checked.
/// Not thread-safe (one per thread); keeps no state between images but its name.
class PngDecoder : public NamedSource {
 public:
  using NamedSource::NamedSource;

  /// Reads the IHDR and checks the pixel limit (schema::kMaxImagePixels) before anything is
  /// allocated. FormatError naming the sample for a damaged header.
  ImageInfo header(std::span<const std::uint8_t> bytes, std::uint64_t sample);
  /// Decodes into `out` (RGB, info.width x info.height, rows `out.stride` apart).
  void decode(std::span<const std::uint8_t> bytes, const ImageInfo& info, const ImageView& out,
              std::uint64_t sample);

 private:
  std::vector<std::uint8_t> rows_;  // when out's rows are not packed
};

/// WebP files with libwebp: lossy and lossless, with or without alpha; an animation's first
/// frame (libwebpdemux). Not thread-safe (one per thread).
class WebpDecoder : public NamedSource {
 public:
  using NamedSource::NamedSource;

  ImageInfo header(std::span<const std::uint8_t> bytes, std::uint64_t sample);
  void decode(std::span<const std::uint8_t> bytes, const ImageInfo& info, const ImageView& out,
              std::uint64_t sample);
};

/// Any supported image, by its content: sniff_image_format() picks JpegDecoder, PngDecoder or
/// WebpDecoder. A format gpufeed does not decode (GIF, TIFF, BMP, HEIF, ...) or bytes that are
/// no image raise FormatError naming the sample and the format found. One per thread.
class ImageDecoder {
 public:
  explicit ImageDecoder(std::string source = {});

  void set_source(std::string source);
  [[nodiscard]] const std::string& source() const { return source_; }

  ImageInfo header(std::span<const std::uint8_t> bytes, std::uint64_t sample);
  /// Full size into `out` (RGB, info.width x info.height).
  void decode(std::span<const std::uint8_t> bytes, const ImageInfo& info, const ImageView& out,
              std::uint64_t sample);
  /// The JPEG decoder, for DCT-scaled and region decodes of JPEG samples.
  [[nodiscard]] JpegDecoder& jpeg() { return jpeg_; }

 private:
  std::string source_;
  JpegDecoder jpeg_;
  PngDecoder png_;
  WebpDecoder webp_;
};

}  // namespace gpufeed::formats
