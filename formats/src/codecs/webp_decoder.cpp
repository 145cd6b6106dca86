// WebP with libwebp: still images straight into RGB (alpha dropped), an animation's first frame
// through libwebpdemux's animation decoder.
#include <webp/decode.h>
#include <webp/demux.h>

#include <cstring>

#include "gpufeed/base/unique_handle.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/image_codec.hpp"
#include "image_errors.hpp"

namespace gpufeed::formats {

namespace {

struct AnimDecoderTraits {
  using handle_type = WebPAnimDecoder*;
  static constexpr WebPAnimDecoder* null() noexcept { return nullptr; }
  static void destroy(WebPAnimDecoder* d) noexcept { WebPAnimDecoderDelete(d); }
};

const char* status_text(VP8StatusCode status) {
  switch (status) {
    case VP8_STATUS_OUT_OF_MEMORY:
      return "out of memory";
    case VP8_STATUS_INVALID_PARAM:
      return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR:
      return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      return "unsupported feature";
    case VP8_STATUS_SUSPENDED:
      return "suspended";
    case VP8_STATUS_USER_ABORT:
      return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA:
      return "truncated: not enough data";
    default:
      return "error";
  }
}

[[noreturn]] void fail(const std::string& source, std::uint64_t sample, const std::string& what) {
  throw FormatError(detail::describe_sample(source, sample) + " is a damaged WebP (" + what + ")" +
                    std::string(detail::kBadSampleAdvice));
}

void decode_first_frame(std::span<const std::uint8_t> bytes, const ImageInfo& info,
                        const ImageView& out, const std::string& source, std::uint64_t sample) {
  WebPAnimDecoderOptions options;
  WebPAnimDecoderOptionsInit(&options);
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  const WebPData data{bytes.data(), bytes.size()};
  const UniqueHandle<AnimDecoderTraits> decoder(WebPAnimDecoderNew(&data, &options));
  if (!decoder) fail(source, sample, "its animation cannot be read");
  WebPAnimInfo anim{};
  WebPAnimDecoderGetInfo(decoder.get(), &anim);
  std::uint8_t* rgba = nullptr;
  int timestamp = 0;
  if (anim.canvas_width != info.width || anim.canvas_height != info.height ||
      !WebPAnimDecoderGetNext(decoder.get(), &rgba, &timestamp)) {
    fail(source, sample, "its first frame cannot be decoded");
  }
  for (std::uint32_t y = 0; y < info.height; ++y) {
    const std::uint8_t* in = rgba + std::size_t{y} * info.width * 4;
    std::uint8_t* row = out.row(y);
    for (std::uint32_t x = 0; x < info.width; ++x) std::memcpy(row + 3 * x, in + 4 * x, 3);
  }
}

}  // namespace

ImageInfo WebpDecoder::header(std::span<const std::uint8_t> bytes, std::uint64_t sample) {
  WebPBitstreamFeatures features{};
  if (const VP8StatusCode s = WebPGetFeatures(bytes.data(), bytes.size(), &features);
      s != VP8_STATUS_OK) {
    fail(source_, sample, std::string("header: ") + status_text(s));
  }
  ImageInfo info;
  info.format = ImageFormat::webp;
  info.width = static_cast<std::uint32_t>(features.width);
  info.height = static_cast<std::uint32_t>(features.height);
  info.channels = features.has_alpha ? 4 : 3;
  info.lossless = features.format == 2;
  info.animated = features.has_animation != 0;
  detail::check_pixel_limit(info.width, info.height, "WebP", source_, sample);
  return info;
}

void WebpDecoder::decode(std::span<const std::uint8_t> bytes, const ImageInfo& info,
                         const ImageView& out, std::uint64_t sample) {
  if (out.width != info.width || out.height != info.height || out.channels != 3) {
    fail(source_, sample, "the image does not match its header");
  }
  if (info.animated) {
    decode_first_frame(bytes, info, out, source_, sample);
    return;
  }
  const std::size_t size = out.stride * (info.height - 1) + std::size_t{info.width} * 3;
  if (WebPDecodeRGBInto(bytes.data(), bytes.size(), out.data, size, static_cast<int>(out.stride)) ==
      nullptr) {
    fail(source_, sample, "image data: truncated or damaged");
  }
}

}  // namespace gpufeed::formats
