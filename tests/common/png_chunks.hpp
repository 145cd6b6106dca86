#pragma once
// Editing PNG files chunk by chunk, to make damaged ones: big-endian fields, finding a chunk,
// recomputing its CRC. The test executables that include this link ZLIB::ZLIB.
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gpufeed::testing {

inline std::uint32_t be32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return std::uint32_t{b[at]} << 24 | std::uint32_t{b[at + 1]} << 16 |
         std::uint32_t{b[at + 2]} << 8 | b[at + 3];
}

inline void put_be32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}

/// Where a chunk's type starts (its length is 4 bytes before); npos when absent.
inline std::size_t find_chunk(const std::vector<std::uint8_t>& png, const char* type) {
  for (std::size_t at = 8; at + 8 <= png.size(); at += 12 + be32(png, at)) {
    if (std::memcmp(png.data() + at + 4, type, 4) == 0) return at + 4;
  }
  return std::string::npos;
}

/// Recomputes the CRC of the chunk whose type starts at `type_at`.
inline void fix_crc(std::vector<std::uint8_t>& png, std::size_t type_at) {
  const std::uint32_t length = be32(png, type_at - 4);
  const auto crc =
      static_cast<std::uint32_t>(crc32(0, png.data() + type_at, static_cast<uInt>(length + 4)));
  put_be32(png, type_at + 4 + length, crc);
}

/// Splits the chunk whose type starts at `type_at` into two chunks of the same type, the first
/// holding `first` bytes of its data; both CRCs valid.
inline void split_chunk(std::vector<std::uint8_t>& png, std::size_t type_at, std::uint32_t first) {
  const std::uint32_t length = be32(png, type_at - 4);
  std::vector<std::uint8_t> second(12);
  put_be32(second, 0, length - first);
  std::memcpy(second.data() + 4, png.data() + type_at, 4);
  second.insert(second.begin() + 8, png.begin() + static_cast<std::ptrdiff_t>(type_at + 4 + first),
                png.begin() + static_cast<std::ptrdiff_t>(type_at + 4 + length));
  put_be32(png, type_at - 4, first);
  png.erase(png.begin() + static_cast<std::ptrdiff_t>(type_at + 4 + first),
            png.begin() + static_cast<std::ptrdiff_t>(type_at + 8 + length));
  png.insert(png.begin() + static_cast<std::ptrdiff_t>(type_at + 8 + first), second.begin(),
             second.end());
  fix_crc(png, type_at);
  fix_crc(png, type_at + 12 + first);
}

}  // namespace gpufeed::testing
