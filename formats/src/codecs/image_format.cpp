#include "gpufeed/formats/image_format.hpp"

#include <cstring>

namespace gpufeed::formats {

namespace {

bool starts_with(std::span<const std::uint8_t> bytes, std::size_t at, const char* magic,
                 std::size_t length) {
  return bytes.size() >= at + length && std::memcmp(bytes.data() + at, magic, length) == 0;
}

/// ISO base media files (HEIF, AVIF): a "ftyp" box first, its major brand after it.
ImageFormat iso_brand(std::span<const std::uint8_t> bytes) {
  if (!starts_with(bytes, 4, "ftyp", 4) || bytes.size() < 12) return ImageFormat::unknown;
  for (const char* brand : {"avif", "avis"}) {
    if (starts_with(bytes, 8, brand, 4)) return ImageFormat::avif;
  }
  for (const char* brand : {"heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"}) {
    if (starts_with(bytes, 8, brand, 4)) return ImageFormat::heif;
  }
  return ImageFormat::unknown;
}

}  // namespace

std::string to_string(ImageFormat format) {
  constexpr const char* kNames[kImageFormats] = {"JPEG", "PNG",  "WebP", "GIF",       "BMP",
                                                 "TIFF", "HEIF", "AVIF", "JPEG 2000", "unknown"};
  return kNames[static_cast<std::size_t>(format)];
}

std::string key(ImageFormat format) {
  constexpr const char* kKeys[kImageFormats] = {"jpeg", "png",  "webp", "gif",      "bmp",
                                                "tiff", "heif", "avif", "jpeg2000", "unknown"};
  return kKeys[static_cast<std::size_t>(format)];
}

ImageFormat sniff_image_format(std::span<const std::uint8_t> bytes) {
  if (starts_with(bytes, 0, "\xFF\xD8\xFF", 3)) return ImageFormat::jpeg;
  if (starts_with(bytes, 0, "\x89PNG\r\n\x1A\n", 8)) return ImageFormat::png;
  if (starts_with(bytes, 0, "RIFF", 4) && starts_with(bytes, 8, "WEBP", 4)) {
    return ImageFormat::webp;
  }
  if (starts_with(bytes, 0, "GIF87a", 6) || starts_with(bytes, 0, "GIF89a", 6)) {
    return ImageFormat::gif;
  }
  if (starts_with(bytes, 0, "BM", 2) && bytes.size() >= 26) return ImageFormat::bmp;
  if (starts_with(bytes, 0, "II*\0", 4) || starts_with(bytes, 0, "MM\0*", 4)) {
    return ImageFormat::tiff;
  }
  if (starts_with(bytes, 0, "\0\0\0\x0CjP  \r\n\x87\n", 12) ||
      starts_with(bytes, 0, "\xFF\x4F\xFF\x51", 4)) {
    return ImageFormat::jpeg2000;
  }
  return iso_brand(bytes);
}

bool decodable(ImageFormat format) {
  return format == ImageFormat::jpeg || format == ImageFormat::png || format == ImageFormat::webp;
}

}  // namespace gpufeed::formats
