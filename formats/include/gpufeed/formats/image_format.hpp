#pragma once
// What an encoded image is, told by its first bytes (magic numbers), whatever its file is named.
#include <cstdint>
#include <span>
#include <string>

namespace gpufeed::formats {

enum class ImageFormat : std::uint8_t {
  jpeg,
  png,
  webp,
  // Recognized, to name them in errors; not decoded:
  gif,
  bmp,
  tiff,
  heif,
  avif,
  jpeg2000,
  unknown,
};
inline constexpr std::size_t kImageFormats = 10;

/// "JPEG", "PNG", "WebP", "GIF", "BMP", "TIFF", "HEIF", "AVIF", "JPEG 2000", "unknown".
std::string to_string(ImageFormat format);
/// The format's lower-case key in JSON and command lines: "jpeg", "png", "webp", ...
std::string key(ImageFormat format);

/// The format the bytes start with; `unknown` for anything else (text, truncated headers).
ImageFormat sniff_image_format(std::span<const std::uint8_t> bytes);

/// JPEG, PNG and WebP: the formats ImageDecoder decodes.
bool decodable(ImageFormat format);

}  // namespace gpufeed::formats
