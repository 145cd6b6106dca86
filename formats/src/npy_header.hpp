#pragma once
// The .npy header: magic, version, and the Python dict literal that describes the array.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpufeed::formats::detail {

/// What a .npy header says about its array, checked to be something NpyArray serves: C order,
/// little-endian (or single-byte) integers, booleans or floats.
struct NpyHeader {
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::size_t item_size = 0;
  std::uint64_t element_count = 0;
  std::size_t data_offset = 0;  ///< where the data starts in the file
};

/// Parses the header at the start of `file`; throws FormatError naming `path`.
NpyHeader parse_npy_header(std::span<const std::uint8_t> file, const std::string& path);

/// The bytes before the data of a version 1.0 (2.0 when the dict is too long) file, padded so
/// that the data starts on a 64-byte boundary. Throws std::invalid_argument when `dtype` is
/// not supported or `data_bytes` does not match the shape.
std::string format_npy_header(const std::string& dtype, const std::vector<std::uint64_t>& shape,
                              std::uint64_t data_bytes);

/// One little-endian integer element of `kind` 'u', 'i' or 'b' and `size` bytes.
std::int64_t npy_integer(const std::uint8_t* element, char kind, std::size_t size);

}  // namespace gpufeed::formats::detail
