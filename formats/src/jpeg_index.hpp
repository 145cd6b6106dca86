#pragma once
// Reading and checking the index of a jpeg-layout file: offsets, shapes and checksums.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpufeed/formats/jpeg_dataset.hpp"

namespace gpufeed::formats::detail {

/// /jpeg/offsets as uint64, checked: N+1 entries (N <= schema::kMaxSamples) starting at 0,
/// never decreasing, no sample over schema::kMaxSampleBytes, the last equal to `total_bytes`
/// (the size of /jpeg/bytes). Throws FormatError naming `path`, the dataset and the sample.
std::vector<std::uint64_t> read_jpeg_offsets(hid_t file, const std::string& path,
                                             std::uint64_t total_bytes);

/// /jpeg/shapes, which must be integers of shape [samples, 3].
std::vector<JpegShape> read_jpeg_shapes(hid_t file, const std::string& path, std::uint64_t samples);

/// /jpeg/crc32 ([samples] integers), or empty when the file has none.
std::vector<std::uint32_t> read_jpeg_checksums(hid_t file, const std::string& path,
                                               std::uint64_t samples);

}  // namespace gpufeed::formats::detail
