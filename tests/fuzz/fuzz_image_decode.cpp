// libFuzzer target: any bytes as an image sample, decoded the way the loader and h5pack do:
// sniffed, header read (pixel limit), decoded whole, and for JPEG also decoded at the fastest
// DCT scale for a 64x64 output, only the region a crop needs. A FormatError is the expected
// answer to bad bytes; anything else (a crash, a sanitizer report, a leak, a hang) is a bug.
#include <cstdint>
#include <span>
#include <vector>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/image_codec.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"

namespace {

// Keeps each input fast: headers declaring more are still parsed, not decoded.
constexpr std::uint64_t kMaxFuzzPixels = 4u << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpufeed::formats;
  static ImageDecoder decoder("fuzz");
  const std::span<const std::uint8_t> bytes(data, size);
  try {
    const ImageInfo info = decoder.header(bytes, 0);
    if (std::uint64_t{info.width} * info.height > kMaxFuzzPixels) return 0;
    std::vector<std::uint8_t> pixels(std::size_t{info.width} * info.height * 3);
    decoder.decode(
        bytes, info,
        ImageView{pixels.data(), info.width, info.height, 3, std::size_t{info.width} * 3}, 0);
    if (info.format == ImageFormat::jpeg) {
      const ScalingFactor scale = fastest_scale(info.width, info.height, 64, 64);
      const std::uint32_t sw = scale.scale(info.width), sh = scale.scale(info.height);
      const PixelRect region{sw / 4, sh / 4, sw / 2 + 1, sh / 2 + 1};
      (void)decoder.jpeg().decode_region(bytes, info.jpeg, scale, region, 0);
    }
  } catch (const FormatError&) {
  }
  return 0;
}
