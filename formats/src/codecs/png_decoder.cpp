// PNG with libspng: header first (size checked before anything is allocated), then the image
// as 8-bit RGB.
#include <spng.h>

#include <cstring>

#include "gpufeed/base/unique_handle.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/image_codec.hpp"
#include "image_errors.hpp"

namespace gpufeed::formats {

namespace {

struct SpngTraits {
  using handle_type = spng_ctx*;
  static constexpr spng_ctx* null() noexcept { return nullptr; }
  static void destroy(spng_ctx* ctx) noexcept { spng_ctx_free(ctx); }
};
using SpngContext = UniqueHandle<SpngTraits>;

/// Ancillary chunks may hold this much (text, ICC profiles); more is a damaged or hostile file.
constexpr std::size_t kChunkLimit = 64u << 20;

[[noreturn]] void fail(const std::string& source, std::uint64_t sample, const char* what,
                       int code) {
  throw FormatError(detail::describe_sample(source, sample) + " is a damaged PNG (" + what + ": " +
                    spng_strerror(code) + ")" + std::string(detail::kBadSampleAdvice));
}

/// A decoder context over `bytes`, CRCs of critical chunks checked. The CRCs of the IDAT chunks
/// cover every compressed byte (decode() reads past the image data so that the last chunk's is
/// checked too), so the zlib stream's Adler-32 of the decompressed bytes is not computed again
/// (about 6% of a decode); a damaged deflate stream is still refused by inflate itself. Pillow
/// does the reverse: Adler-32 checked, IDAT CRCs skipped.
SpngContext open(std::span<const std::uint8_t> bytes, const std::string& source,
                 std::uint64_t sample) {
  SpngContext ctx(spng_ctx_new(SPNG_CTX_IGNORE_ADLER32));
  if (!ctx) throw FormatError("cannot create a PNG decoder; the process may be out of memory");
  spng_set_crc_action(ctx.get(), SPNG_CRC_ERROR, SPNG_CRC_DISCARD);
  spng_set_chunk_limits(ctx.get(), kChunkLimit, kChunkLimit);
  if (const int r = spng_set_png_buffer(ctx.get(), bytes.data(), bytes.size()); r != 0) {
    fail(source, sample, "reading", r);
  }
  return ctx;
}

}  // namespace

ImageInfo PngDecoder::header(std::span<const std::uint8_t> bytes, std::uint64_t sample) {
  const SpngContext ctx = open(bytes, source_, sample);
  spng_ihdr ihdr{};
  if (const int r = spng_get_ihdr(ctx.get(), &ihdr); r != 0) fail(source_, sample, "header", r);
  ImageInfo info;
  info.format = ImageFormat::png;
  info.width = ihdr.width;
  info.height = ihdr.height;
  info.bit_depth = ihdr.bit_depth;
  info.interlaced = ihdr.interlace_method != 0;
  switch (ihdr.color_type) {
    case SPNG_COLOR_TYPE_GRAYSCALE:
      info.channels = 1;
      break;
    case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA:
      info.channels = 2;
      break;
    case SPNG_COLOR_TYPE_TRUECOLOR_ALPHA:
      info.channels = 4;
      break;
    case SPNG_COLOR_TYPE_INDEXED:
      info.palette = true;
      info.channels = 3;
      break;
    default:
      info.channels = 3;
  }
  detail::check_pixel_limit(info.width, info.height, "PNG", source_, sample);
  return info;
}

void PngDecoder::decode(std::span<const std::uint8_t> bytes, const ImageInfo& info,
                        const ImageView& out, std::uint64_t sample) {
  const SpngContext ctx = open(bytes, source_, sample);
  std::size_t size = 0;
  if (const int r = spng_decoded_image_size(ctx.get(), SPNG_FMT_RGB8, &size); r != 0) {
    fail(source_, sample, "header", r);
  }
  const std::size_t row = std::size_t{info.width} * 3;
  if (size != row * info.height || out.width != info.width || out.height != info.height) {
    throw FormatError(detail::describe_sample(source_, sample) +
                      " changed while it was decoded (header and image disagree)" +
                      std::string(detail::kBadSampleAdvice));
  }
  // Straight into `out` when its rows are packed, else through a buffer.
  const bool packed = out.stride == row;
  std::uint8_t* target = out.data;
  if (!packed) {
    rows_.resize(size);
    target = rows_.data();
  }
  if (const int r = spng_decode_image(ctx.get(), target, size, SPNG_FMT_RGB8, 0); r != 0) {
    fail(source_, sample, "image data", r);
  }
  // libspng stops at the last row, before the CRC of the last IDAT chunk: reading the chunks
  // after the image checks it. Anything else there (a missing IEND, damaged ancillary chunks)
  // leaves the pixels whole and is ignored, as Pillow does.
  if (const int r = spng_decode_chunks(ctx.get()); r == SPNG_ECHUNK_CRC) {
    fail(source_, sample, "image data", r);
  }
  if (!packed) {
    for (std::uint32_t y = 0; y < info.height; ++y) std::memcpy(out.row(y), target + y * row, row);
  }
}

}  // namespace gpufeed::formats
