#include "image_errors.hpp"

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/schema.hpp"

namespace gpufeed::formats::detail {

std::string describe_sample(const std::string& source, std::uint64_t sample) {
  if (sample == kNoSample) return source;
  std::string text = "sample " + std::to_string(sample);
  if (!source.empty()) text += " of " + source;
  return text;
}

void check_pixel_limit(std::uint32_t width, std::uint32_t height, const char* format,
                       const std::string& source, std::uint64_t sample) {
  const std::uint64_t pixels = std::uint64_t{width} * height;
  if (pixels <= schema::kMaxImagePixels) return;
  throw FormatError(describe_sample(source, sample) + " declares " + std::to_string(width) + "x" +
                    std::to_string(height) + " pixels, more than the limit of " +
                    std::to_string(schema::kMaxImagePixels / 1'000'000) + " megapixels a " +
                    format + " may have" + std::string(kBadSampleAdvice));
}

}  // namespace gpufeed::formats::detail
