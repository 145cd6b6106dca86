// Any image by its content: the decoder its first bytes call for.
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/image_codec.hpp"
#include "image_errors.hpp"

namespace gpufeed::formats {

namespace {

/// The first bytes in hex, for a message about bytes that are no image gpufeed knows.
std::string leading_bytes(std::span<const std::uint8_t> bytes) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (std::size_t i = 0; i < bytes.size() && i < 8; ++i) {
    if (i > 0) out += ' ';
    out += hex[bytes[i] >> 4];
    out += hex[bytes[i] & 15];
  }
  return out;
}

[[noreturn]] void refuse(std::span<const std::uint8_t> bytes, ImageFormat format,
                         const std::string& source, std::uint64_t sample) {
  const std::string what = detail::describe_sample(source, sample);
  if (bytes.empty()) {
    throw FormatError(what + " is empty (0 bytes)" + std::string(detail::kBadSampleAdvice));
  }
  if (format == ImageFormat::unknown) {
    throw FormatError(what + " is not an image gpufeed decodes (it starts with " +
                      leading_bytes(bytes) + "; gpufeed decodes JPEG, PNG and WebP)" +
                      std::string(detail::kBadSampleAdvice));
  }
  throw FormatError(what + " is a " + to_string(format) +
                    " image; gpufeed decodes JPEG, PNG and WebP: convert it to one of them" +
                    std::string(detail::kBadSampleAdvice));
}

}  // namespace

ImageDecoder::ImageDecoder(std::string source) {
  set_source(std::move(source));
}

void ImageDecoder::set_source(std::string source) {
  source_ = std::move(source);
  jpeg_.set_source(source_);
  png_.set_source(source_);
  webp_.set_source(source_);
}

ImageInfo ImageDecoder::header(std::span<const std::uint8_t> bytes, std::uint64_t sample) {
  const ImageFormat format = sniff_image_format(bytes);
  switch (format) {
    case ImageFormat::jpeg: {
      ImageInfo info;
      info.format = format;
      info.jpeg = jpeg_.header(bytes, sample);
      info.width = info.jpeg.width;
      info.height = info.jpeg.height;
      info.channels = info.jpeg.components;
      return info;
    }
    case ImageFormat::png:
      return png_.header(bytes, sample);
    case ImageFormat::webp:
      return webp_.header(bytes, sample);
    default:
      refuse(bytes, format, source_, sample);
  }
}

void ImageDecoder::decode(std::span<const std::uint8_t> bytes, const ImageInfo& info,
                          const ImageView& out, std::uint64_t sample) {
  switch (info.format) {
    case ImageFormat::jpeg:
      jpeg_.decode(bytes, info.jpeg, ScalingFactor{}, out, sample);
      return;
    case ImageFormat::png:
      png_.decode(bytes, info, out, sample);
      return;
    case ImageFormat::webp:
      webp_.decode(bytes, info, out, sample);
      return;
    default:
      refuse(bytes, info.format, source_, sample);
  }
}

}  // namespace gpufeed::formats
