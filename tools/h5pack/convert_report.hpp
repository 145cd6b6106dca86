#pragma once
// The lines h5pack convert prints when it is done.
#include <array>
#include <cstdint>
#include <string>

#include "gpufeed/formats/image_format.hpp"
#include "gpufeed/formats/pack_file.hpp"
#include "h5pack/compression.hpp"
#include "h5pack/image_folder.hpp"

namespace gpufeed::tools::h5pack {

/// "12.3 MB"
std::string megabytes(std::uint64_t bytes);
/// Size of a file, 0 when it cannot be read.
std::uint64_t file_bytes(const std::string& path);

/// "wrote OUT: 300 samples 16x12x3, 32 per chunk, 10 chunks, gzip:4, 1.2 MB (ratio 1.50), 0.3 s"
void print_raw_summary(const std::string& path, const formats::PackResult& result,
                       const Compression& compression);

struct JpegSummary {
  std::uint64_t samples = 0;
  std::uint64_t classes = 0;
  std::uint64_t jpeg_bytes = 0;
  std::uint64_t reencoded = 0;  ///< images encoded here rather than kept as they were
  double seconds = 0;
  /// Images stored per format (by formats::ImageFormat).
  std::array<std::uint64_t, formats::kImageFormats> formats{};
};
/// "wrote OUT: 300 images (JPEG 290, PNG 10; jpeg layout, original bytes), 10 classes, 12.0 MB
/// of encoded images, file 12.1 MB, 1.2 s (250 images/s)"
void print_jpeg_summary(const std::string& path, const JpegSummary& summary);

/// Notes on what an image folder held besides JPEG files: other files, empty classes.
void print_folder_notes(const ImageFolder& folder);

}  // namespace gpufeed::tools::h5pack
