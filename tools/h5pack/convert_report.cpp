#include "h5pack/convert_report.hpp"

#include <cstdio>
#include <filesystem>

#include "common/progress.hpp"

namespace gpufeed::tools::h5pack {

std::string megabytes(std::uint64_t bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buffer;
}

std::uint64_t file_bytes(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<std::uint64_t>(size);
}

void print_raw_summary(const std::string& path, const formats::PackResult& r,
                       const Compression& c) {
  const double ratio = r.file_bytes == 0
                           ? 0.0
                           : static_cast<double>(r.raw_bytes) / static_cast<double>(r.file_bytes);
  char ratio_text[32];
  std::snprintf(ratio_text, sizeof ratio_text, "%.2f", ratio);
  std::printf(
      "wrote %s: %llu samples %ux%ux%u, %llu per chunk, %llu chunks, %s, %s (ratio %s), %s\n",
      path.c_str(), static_cast<unsigned long long>(r.samples), r.shape.height, r.shape.width,
      r.shape.channels, static_cast<unsigned long long>(r.samples_per_chunk),
      static_cast<unsigned long long>(r.chunks), c.to_string().c_str(),
      megabytes(r.file_bytes).c_str(), ratio_text, format_duration(r.seconds).c_str());
}

void print_jpeg_summary(const std::string& path, const JpegSummary& s) {
  const double rate = s.seconds > 0 ? static_cast<double>(s.samples) / s.seconds : 0.0;
  const std::string kept = s.reencoded == 0           ? std::string("original bytes")
                           : s.reencoded == s.samples ? std::string("re-encoded")
                                                      : std::to_string(s.reencoded) + " re-encoded";
  std::string formats;
  for (std::size_t f = 0; f < formats::kImageFormats; ++f) {
    if (s.formats[f] == 0) continue;
    formats += (formats.empty() ? "" : ", ") + to_string(static_cast<formats::ImageFormat>(f)) +
               " " + std::to_string(s.formats[f]);
  }
  std::printf(
      "wrote %s: %llu images (%s%sjpeg layout, %s), %llu classes, %s of encoded images, file %s, "
      "%s (%.0f images/s)\n",
      path.c_str(), static_cast<unsigned long long>(s.samples), formats.c_str(),
      formats.empty() ? "" : "; ", kept.c_str(), static_cast<unsigned long long>(s.classes),
      megabytes(s.jpeg_bytes).c_str(), megabytes(file_bytes(path)).c_str(),
      format_duration(s.seconds).c_str(), rate);
}

void print_folder_notes(const ImageFolder& folder) {
  if (folder.other_files > 0) {
    std::printf("ignored %llu files without an image extension (.jpg .jpeg .png .webp ...)\n",
                static_cast<unsigned long long>(folder.other_files));
  }
  if (folder.hidden > 0) {
    std::printf("ignored %llu hidden files and folders (names starting with '.')\n",
                static_cast<unsigned long long>(folder.hidden));
  }
  if (!folder.empty_classes.empty()) {
    std::string names;
    for (const std::string& name : folder.empty_classes) {
      names += (names.empty() ? "" : ", ") + name;
    }
    std::printf("%zu class folders hold no image (their labels are unused): %s\n",
                folder.empty_classes.size(), names.c_str());
  }
}

}  // namespace gpufeed::tools::h5pack
