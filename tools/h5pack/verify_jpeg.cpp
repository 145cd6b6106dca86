// h5pack verify of a jpeg-layout file: the reader validates the offsets when it opens the
// file; then every sample is read, its CRC-32 compared and it is decoded with the codec its
// bytes call for (JPEG, PNG or WebP), on every core.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <oneapi/tbb/enumerable_thread_specific.h>

#include "common/cli.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/image_codec.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/ordered_map.hpp"
#include "h5pack/commands.hpp"
#include "h5pack/problem_list.hpp"

namespace gpufeed::tools::h5pack {

namespace {

struct VerifyThread {
  formats::ImageDecoder decoder;
  std::vector<std::uint8_t> bytes;
  formats::Image image;
};

std::string shape_text(std::uint32_t h, std::uint32_t w, std::uint32_t c) {
  return std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c);
}

/// What is wrong with sample `i`, if anything.
std::optional<std::string> check_sample(const formats::JpegDatasetReader& reader, std::uint64_t i,
                                        VerifyThread& t) {
  try {
    reader.sample_bytes(i, t.bytes);
    if (reader.has_checksums() && !reader.verify_checksum(i, t.bytes)) {
      return "its bytes do not match the stored CRC-32 (the file was changed or damaged)";
    }
    const formats::ImageInfo info = t.decoder.header(t.bytes, i);
    const formats::JpegShape stored = reader.shape(i);
    if (info.height != stored.height || info.width != stored.width ||
        info.channels != stored.channels) {
      return "its " + to_string(info.format) + " header declares " +
             shape_text(info.height, info.width, info.channels) + " but /jpeg/shapes says " +
             shape_text(stored.height, stored.width, stored.channels);
    }
    t.image.width = info.width;
    t.image.height = info.height;
    t.image.channels = 3;
    t.image.pixels.resize(std::size_t{info.width} * info.height * 3);
    t.decoder.decode(t.bytes, info, t.image.view(), i);
  } catch (const formats::FormatError& e) {
    return one_line(e.what());
  }
  return std::nullopt;
}

void check_samples(const formats::JpegDatasetReader& reader, VerifyPass& pass) {
  oneapi::tbb::enumerable_thread_specific<VerifyThread> threads([&reader] {
    return VerifyThread{formats::ImageDecoder(reader.path()), {}, {}};
  });
  plan_every_unit(reader);
  formats::ordered_parallel_map(
      reader.num_samples(), 0,
      [&](std::uint64_t i) -> std::optional<std::string> {
        const auto problem = check_sample(reader, i, threads.local());
        if (!problem) return std::nullopt;
        return "bad sample " + std::to_string(i) + ": " + *problem;
      },
      [&](std::uint64_t i, const std::optional<std::string>& problem) {
        pass.checked(i, problem);
      });
}

}  // namespace

int verify_jpeg_file(const std::string& file, const InspectOptions& o, const std::string& name) {
  const formats::JpegDatasetReader reader(file, jpeg_reader_options(o));
  VerifyPass pass("samples", reader.num_samples(),
                  reader.total_bytes() / std::max<std::uint64_t>(1, reader.num_samples()));
  check_samples(reader, pass);
  return pass.verdict(name.empty() ? file : name, reader.labels(), reader.class_names().size(),
                      (name.empty() ? "" : name + ": ") +
                          "ok: " + std::to_string(reader.num_samples()) + " samples decoded, " +
                          (reader.has_checksums() ? "checksums match" : "no checksums stored") +
                          ", offsets and labels consistent");
}

}  // namespace gpufeed::tools::h5pack
