// h5pack info of a jpeg-layout file: counts, sizes, image shapes, checksums, classes.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/cli.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "h5pack/commands.hpp"
#include "h5pack/convert_report.hpp"
#include "h5pack/info_text.hpp"

namespace gpufeed::tools::h5pack {

namespace {

using nlohmann::json;

/// min, max and mean of a quantity over the samples.
class Range {
 public:
  void add(std::uint64_t value) {
    min_ = count_ == 0 ? value : std::min(min_, value);
    max_ = std::max(max_, value);
    sum_ += static_cast<double>(value);
    ++count_;
  }
  [[nodiscard]] json to_json() const {
    return {{"min", min_}, {"max", max_}, {"mean", count_ == 0 ? 0.0 : sum_ / count_}};
  }

 private:
  std::uint64_t min_ = 0;
  std::uint64_t max_ = 0;
  double sum_ = 0;
  double count_ = 0;
};

json shape_stats(const formats::JpegDatasetReader& r) {
  Range height;
  Range width;
  Range bytes;
  std::map<std::string, std::uint64_t> channels;
  std::map<std::string, std::uint64_t> image_formats;
  for (std::uint64_t i = 0; i < r.num_samples(); ++i) {
    const formats::JpegShape shape = r.shape(i);
    height.add(shape.height);
    width.add(shape.width);
    bytes.add(r.sample_size(i));
    ++channels[std::to_string(shape.channels)];
    // Told by the sample's first bytes: the layout stores every image as it came.
    ++image_formats[r.sample_size(i) == 0 ? "empty" : key(r.sample_format(i))];
  }
  return {{"height", height.to_json()},
          {"width", width.to_json()},
          {"sample_bytes", bytes.to_json()},
          {"channels", channels},
          {"formats", image_formats}};
}

json jpeg_info_json(const formats::JpegDatasetReader& r) {
  json j = {{"path", r.path()},
            {"schema_version", r.schema_version()},
            {"storage", "jpeg"},
            {"layout", "jpeg"},
            {"samples", r.num_samples()},
            {"stored_bytes", r.total_bytes()},
            {"file_bytes", file_bytes(r.path())},
            {"compression", "jpeg"},
            {"read_path",
             r.read_path() == formats::JpegReadPath::contiguous ? "contiguous" : "hyperslab"},
            {"checksums", r.has_checksums() ? "crc32" : "none"}};
  j.update(shape_stats(r));
  add_contents_json(j, r.labels(), r.class_names(), r.channel_stats());
  return j;
}

std::string range_text(const json& range, const char* unit) {
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%llu .. %llu %s (mean %.1f)",
                range["min"].get<unsigned long long>(), range["max"].get<unsigned long long>(),
                unit, range["mean"].get<double>());
  return buffer;
}

std::string channels_text(const json& channels) {
  std::string text;
  for (const auto& [c, n] : channels.items()) {
    const std::string kind = c == "1"   ? "grayscale"
                             : c == "2" ? "grayscale + alpha"
                             : c == "3" ? "color"
                             : c == "4" ? "CMYK or color + alpha"
                                        : c;
    text += (text.empty() ? "" : ", ") + n.dump() + " " + kind;
  }
  return text;
}

std::string formats_text(const json& image_formats) {
  std::string text;
  for (const auto& [k, n] : image_formats.items()) {
    std::string name = k;
    for (std::size_t f = 0; f < formats::kImageFormats; ++f) {
      const auto format = static_cast<formats::ImageFormat>(f);
      if (key(format) == k) name = to_string(format);
    }
    text += (text.empty() ? "" : ", ") + n.dump() + " " + name;
  }
  return text;
}

void print_jpeg_text(const json& j) {
  print_file_rows(j);
  print_row("layout", "jpeg (encoded images back to back in /jpeg/bytes)");
  print_row("samples", j["samples"].dump() + " (" + channels_text(j["channels"]) + ")");
  print_row("formats", formats_text(j["formats"]));
  print_row("height", range_text(j["height"], "px"));
  print_row("width", range_text(j["width"], "px"));
  print_row("image size", range_text(j["sample_bytes"], "bytes"));
  print_row("stored", megabytes(j["stored_bytes"].get<std::uint64_t>()) +
                          " of encoded images, file " +
                          megabytes(j["file_bytes"].get<std::uint64_t>()));
  print_row("compression", "the images' own (the bytes dataset is unfiltered)");
  print_row("read path", j["read_path"].get<std::string>());
  print_row("checksums",
            j["checksums"].get<std::string>() == "crc32" ? "CRC-32 of every sample" : "none");
  print_contents_rows(j);
}

}  // namespace

int run_info_jpeg(const InspectOptions& o) {
  const formats::JpegDatasetReader reader(o.file, jpeg_reader_options(o));
  return print_info(jpeg_info_json(reader), o.json, print_jpeg_text);
}

}  // namespace gpufeed::tools::h5pack
