#include <memory>
#include <stdexcept>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "turbojpeg.hpp"

namespace gpufeed::formats {

namespace {

struct TjFree {
  void operator()(unsigned char* buffer) const noexcept { tjFree(buffer); }
};

int pixel_format_of(std::uint32_t channels) {
  switch (channels) {
    case 1:
      return TJPF_GRAY;
    case 3:
      return TJPF_RGB;
    case 4:
      return TJPF_CMYK;
    default:
      throw UsageError("JpegEncoder encodes 1, 3 or 4 channels, not " + std::to_string(channels));
  }
}

}  // namespace

JpegEncoder::JpegEncoder(int quality, JpegSubsampling subsampling, bool progressive)
    : handle_(detail::make_compressor()),
      quality_(quality),
      subsampling_(subsampling),
      progressive_(progressive) {
  if (quality < 1 || quality > 100) {
    throw UsageError("JPEG quality must be 1-100, not " + std::to_string(quality));
  }
  if (subsampling == JpegSubsampling::other) {
    throw UsageError("JpegEncoder needs a named subsampling (4:4:4, 4:2:0, ...)");
  }
}

std::vector<std::uint8_t> JpegEncoder::encode(const ConstImageView& image) {
  const int pixel_format = pixel_format_of(image.channels);
  const int subsampling = image.channels == 1 ? TJSAMP_GRAY : static_cast<int>(subsampling_);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const int status =
      tjCompress2(handle_.get(), image.data, static_cast<int>(image.width),
                  static_cast<int>(image.stride), static_cast<int>(image.height), pixel_format,
                  &buffer, &size, subsampling, quality_, progressive_ ? TJFLAG_PROGRESSIVE : 0);
  const std::unique_ptr<unsigned char, TjFree> owned(buffer);
  const std::string what = "a " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                           "x" + std::to_string(image.channels) + " image";
  detail::check_tj(handle_.get(), status, {"encode", what, detail::kNoSample});
  return {buffer, buffer + size};
}

}  // namespace gpufeed::formats
