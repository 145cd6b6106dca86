#include "deflate.hpp"
#include "gpufeed/base/errors.hpp"

#include <libdeflate.h>

#include <array>
#include <new>
#include <stdexcept>
#include <string>

#include "gpufeed/base/unique_handle.hpp"

namespace gpufeed::formats::deflate {

namespace {

struct DecompressorTraits {
  using handle_type = libdeflate_decompressor*;
  static constexpr handle_type null() noexcept { return nullptr; }
  static void destroy(handle_type d) noexcept { libdeflate_free_decompressor(d); }
};

struct CompressorTraits {
  using handle_type = libdeflate_compressor*;
  static constexpr handle_type null() noexcept { return nullptr; }
  static void destroy(handle_type c) noexcept { libdeflate_free_compressor(c); }
};

constexpr int kMaxLevel = 12;

libdeflate_decompressor* thread_decompressor() {
  thread_local UniqueHandle<DecompressorTraits> decompressor{libdeflate_alloc_decompressor()};
  if (!decompressor) throw std::bad_alloc();
  return decompressor.get();
}

libdeflate_compressor* thread_compressor(int level) {
  thread_local std::array<UniqueHandle<CompressorTraits>, kMaxLevel + 1> compressors;
  auto& slot = compressors[static_cast<std::size_t>(level)];
  if (!slot) {
    slot.reset(libdeflate_alloc_compressor(level));
    if (!slot) throw std::bad_alloc();
  }
  return slot.get();
}

}  // namespace

const char* zlib_decompress(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) {
  // Passing no actual-size pointer makes libdeflate insist on exactly out.size() bytes.
  switch (libdeflate_zlib_decompress(thread_decompressor(), in.data(), in.size(), out.data(),
                                     out.size(), nullptr)) {
    case LIBDEFLATE_SUCCESS:
      return nullptr;
    case LIBDEFLATE_SHORT_OUTPUT:
      return "deflate data holds fewer bytes than the chunk should";
    case LIBDEFLATE_INSUFFICIENT_SPACE:
      return "deflate data holds more bytes than the chunk should";
    default:
      return "deflate data invalid";
  }
}

std::vector<std::uint8_t> zlib_compress(std::span<const std::uint8_t> in, int level) {
  if (level < 1 || level > kMaxLevel) {
    throw UsageError("deflate level must be 1-12, not " + std::to_string(level));
  }
  libdeflate_compressor* compressor = thread_compressor(level);
  std::vector<std::uint8_t> out(libdeflate_zlib_compress_bound(compressor, in.size()));
  const std::size_t size =
      libdeflate_zlib_compress(compressor, in.data(), in.size(), out.data(), out.size());
  // The bound is a guarantee, so 0 ("did not fit") would be a libdeflate bug.
  if (size == 0) throw Error("libdeflate output exceeded its own bound");
  out.resize(size);
  return out;
}

}  // namespace gpufeed::formats::deflate
