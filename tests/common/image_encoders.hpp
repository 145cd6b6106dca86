#pragma once
// PNG (libspng) and WebP (libwebp) files for the tests, from interleaved 8-bit pixels; the
// test executables that include this link PkgConfig::SPNG and PkgConfig::WEBP.
#include <spng.h>
#include <webp/encode.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "gpufeed/formats/image.hpp"

namespace gpufeed::testing {

/// A PNG of `image` (1 channel: grayscale, 3: RGB, 4: RGBA), 8 bits a sample.
inline std::vector<std::uint8_t> encode_png(const formats::Image& image) {
  spng_ctx* ctx = spng_ctx_new(SPNG_CTX_ENCODER);
  spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
  spng_ihdr ihdr{};
  ihdr.width = image.width;
  ihdr.height = image.height;
  ihdr.bit_depth = 8;
  ihdr.color_type = image.channels == 1   ? SPNG_COLOR_TYPE_GRAYSCALE
                    : image.channels == 4 ? SPNG_COLOR_TYPE_TRUECOLOR_ALPHA
                                          : SPNG_COLOR_TYPE_TRUECOLOR;
  spng_set_ihdr(ctx, &ihdr);
  int status = spng_encode_image(ctx, image.pixels.data(), image.pixels.size(), SPNG_FMT_PNG,
                                 SPNG_ENCODE_FINALIZE);
  std::size_t length = 0;
  void* png = status == 0 ? spng_get_png_buffer(ctx, &length, &status) : nullptr;
  spng_ctx_free(ctx);
  if (png == nullptr) throw std::runtime_error(std::string("PNG encode: ") + spng_strerror(status));
  const auto* bytes = static_cast<const std::uint8_t*>(png);
  std::vector<std::uint8_t> out(bytes, bytes + length);
  std::free(png);
  return out;
}

/// A WebP of a 3-channel `image`: lossy at `quality`, or lossless.
inline std::vector<std::uint8_t> encode_webp(const formats::Image& image, bool lossless,
                                             float quality = 85) {
  std::uint8_t* webp = nullptr;
  const int w = static_cast<int>(image.width), h = static_cast<int>(image.height);
  const int stride = w * 3;
  const std::size_t length = lossless
                                 ? WebPEncodeLosslessRGB(image.pixels.data(), w, h, stride, &webp)
                                 : WebPEncodeRGB(image.pixels.data(), w, h, stride, quality, &webp);
  if (length == 0) throw std::runtime_error("WebP encode failed");
  std::vector<std::uint8_t> out(webp, webp + length);
  WebPFree(webp);
  return out;
}

}  // namespace gpufeed::testing
