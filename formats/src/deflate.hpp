#pragma once
// zlib-format (RFC 1950) compression with libdeflate: HDF5's deflate filter stores each chunk as
// one zlib stream, so chunks can be decoded and encoded here without HDF5.
#include <cstdint>
#include <span>
#include <vector>

namespace gpufeed::formats::deflate {

/// Decompresses the zlib stream `in` into exactly `out.size()` bytes. Returns nullptr on
/// success, or a short reason ("deflate data invalid", ...) when the stream is corrupt or
/// does not hold exactly `out.size()` bytes. Thread-safe: each thread uses its own
/// decompressor, allocated on its first call.
[[nodiscard]] const char* zlib_decompress(std::span<const std::uint8_t> in,
                                          std::span<std::uint8_t> out);

/// Compresses `in` as one zlib stream at `level` (1-12; 1-9 match zlib's levels).
/// Thread-safe: each thread keeps one compressor per level.
[[nodiscard]] std::vector<std::uint8_t> zlib_compress(std::span<const std::uint8_t> in, int level);

}  // namespace gpufeed::formats::deflate
